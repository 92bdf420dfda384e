package join

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Content sync over the session connection (docs/protocol.md, section
// 17.4): the host offers its content manifest in Server_ModList, and a
// joiner whose def databases differ asks, in place of Client_Defs, for
// the manifest and the files it lacks. ContentConn is a modsync.Source,
// so modsync.Fetcher checks every size and hash.

// ContentOffer is what a host said of its content.
type ContentOffer struct {
	// Shared is true when the host offered its content manifest.
	Shared bool
	// Matches is true when the host's def databases are the client's
	// (Config.Databases): there is nothing to fetch.
	Matches bool
	// Mods are the host's mods' package IDs, in load order.
	Mods []string
}

// FetchContent connects to the host as Join does (cfg.Addr, Dial, TLS),
// announces the protocol and reads the host's Server_ModList. When the
// host shares its content and its def databases differ from
// cfg.Databases, fn gets the manifest and the files over this
// connection (ContentConn); the client then leaves, and the caller
// loads the content and joins again. The connection is closed on
// return.
func FetchContent(ctx context.Context, cfg Config, fn func(ctx context.Context, cc *ContentConn) error) (ContentOffer, error) {
	cfg = cfg.Defaults()
	nc, err := connect(ctx, cfg)
	if err != nil {
		return ContentOffer{}, err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	defer stop()
	cc := &ContentConn{nc: nc, fr: wire.NewFrameReader(bufio.NewReaderSize(nc, 64<<10), cfg.MaxFrame), wait: cfg.HandshakeTimeout}
	if err := cc.write(&wire.ClientProtocol{Protocol: wire.ProtocolVersion, Codecs: readableCodecs()}); err != nil {
		return ContentOffer{}, err
	}
	p, err := cc.next()
	if err != nil {
		return ContentOffer{}, fmt.Errorf("handshake: %w", err)
	}
	ml, ok := p.(*wire.ServerModList)
	if !ok {
		return ContentOffer{}, protoErr("expected Server_ModList, got %s", p.ID())
	}
	offer := ContentOffer{Shared: len(ml.ContentHash) == wire.ContentHashSize, Mods: ml.Mods, Matches: sameDatabases(ml.Databases, cfg)}
	cc.hash, cc.size = modsync.Sum(ml.ContentHash), int64(ml.ContentSize)
	if offer.Shared && !offer.Matches {
		err = fn(ctx, cc)
	}
	_ = cc.write(&wire.ClientLeave{Why: "content fetched"})
	return offer, err
}

// sameDatabases reports whether the host's announced databases are the
// client's.
func sameDatabases(host []wire.DefSummary, cfg Config) bool {
	if len(host) != len(cfg.Databases) {
		return false
	}
	for _, d := range cfg.Databases {
		if !slices.Contains(host, wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}) {
			return false
		}
	}
	return true
}

// readableCodecs are the codecs this client inflates, for
// Client_Protocol.
func readableCodecs() []uint8 {
	var out []uint8
	for _, c := range snapshot.Readable() {
		out = append(out, uint8(c))
	}
	return out
}

// ContentConn is a connection on which the host offered its content:
// it gets the manifest and, as a modsync.Source, files by hash. Requests
// go one at a time.
type ContentConn struct {
	nc   net.Conn
	fr   *wire.FrameReader
	wait time.Duration // the most to wait for each chunk
	hash modsync.Sum   // the manifest the host offered
	size int64
	// Received counts the frames' bytes read for content (headers
	// included), for reports.
	Received int64
}

func (c *ContentConn) write(p wire.Packet) error {
	b, err := wire.Marshal(nil, p)
	if err != nil {
		return err
	}
	_ = c.nc.SetWriteDeadline(deadline(c.wait))
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", p.ID(), err)
	}
	return nil
}

// next reads one packet from the host within the wait.
func (c *ContentConn) next() (wire.Packet, error) {
	_ = c.nc.SetReadDeadline(deadline(c.wait))
	id, body, err := c.fr.Next()
	if err != nil {
		return nil, err
	}
	c.Received += int64(len(body)) + 5
	return decodeFromHost(id, body)
}

// Manifest gets and checks the host's content manifest: its size and
// SHA-256 are the offer's, and it decodes within lim.
func (c *ContentConn) Manifest(ctx context.Context, lim modsync.Limits) (*modsync.Manifest, modsync.Sum, error) {
	if c.size > int64(lim.MaxManifestBytes) {
		return nil, modsync.Sum{}, &ProtocolError{Err: fmt.Errorf("content manifest of %d bytes: %w (%d)", c.size, modsync.ErrLimit, lim.MaxManifestBytes)}
	}
	body, _, err := c.get(nil, c.size, 0)
	if err != nil {
		return nil, modsync.Sum{}, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, c.size+1))
	if err != nil {
		return nil, modsync.Sum{}, fmt.Errorf("content manifest: %w", err)
	}
	if sum := sha256.Sum256(b); int64(len(b)) != c.size || sum != c.hash {
		return nil, modsync.Sum{}, protoErr("content manifest: not the one the host offered (size or SHA-256)")
	}
	m, err := modsync.Decode(b, lim)
	if err != nil {
		return nil, modsync.Sum{}, &ProtocolError{Err: fmt.Errorf("content manifest: %w", err)}
	}
	return m, c.hash, nil
}

// Get implements modsync.Source: the file's bytes from from on, as the
// host sends them in Server_Content chunks.
func (c *ContentConn) Get(_ context.Context, f modsync.File, from int64) (io.ReadCloser, int64, error) {
	return c.get(f.Hash[:], f.Size, from)
}

// get asks for the manifest (hash nil) or a file of size bytes from
// from on, and returns the reader of its chunks.
func (c *ContentConn) get(hash []byte, size, from int64) (io.ReadCloser, int64, error) {
	if err := c.write(&wire.ClientContentGet{Hash: hash, Offset: uint64(from)}); err != nil {
		return nil, 0, err
	}
	return &contentBody{c: c, hash: hash, size: size, next: from}, from, nil
}

// contentBody reads one answer's chunks in order, inflating each to the
// length it declares and no more.
type contentBody struct {
	c    *ContentConn
	hash []byte
	size int64
	next int64 // the offset of the next chunk
	buf  []byte
	done bool
	wire int64
}

// Read implements io.Reader.
func (b *contentBody) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.done {
			return 0, io.EOF
		}
		if err := b.chunk(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

// chunk reads the next Server_Content and checks it is the next piece
// of what was asked.
func (b *contentBody) chunk() error {
	p, err := b.c.next()
	if err != nil {
		return err
	}
	sc, ok := p.(*wire.ServerContent)
	switch {
	case !ok:
		return protoErr("expected Server_Content, got %s", p.ID())
	case !bytes.Equal(sc.Hash, b.hash) || sc.Offset != uint64(b.next) || sc.Total != uint64(b.size):
		return protoErr("Server_Content of %x at %d of %d, asked %x at %d of %d", sc.Hash, sc.Offset, sc.Total, b.hash, b.next, b.size)
	case sc.Length == 0 && sc.Offset != sc.Total:
		return protoErr("an empty Server_Content at %d of %d", sc.Offset, sc.Total)
	}
	b.wire += int64(len(sc.Data))
	data := sc.Data
	if sc.Coding != wire.ContentStored {
		if data, err = snapshot.Inflate(snapshot.Codec(sc.Coding-1), sc.Data, int64(sc.Length)); err != nil {
			return protoErr("Server_Content: %w", err)
		}
		if len(data) != int(sc.Length) {
			return protoErr("Server_Content inflates to %d bytes, declares %d", len(data), sc.Length)
		}
	}
	b.buf, b.next = data, b.next+int64(sc.Length)
	b.done = b.next == b.size
	return nil
}

// Close implements io.Closer: an answer not read to its end leaves the
// connection unusable for another request, so the fetch ends there.
func (b *contentBody) Close() error {
	if !b.done {
		return b.c.nc.Close()
	}
	return nil
}

// WireBytes implements modsync.WireCounter: the chunks' data bytes as
// they came (compressed or not).
func (b *contentBody) WireBytes() int64 { return b.wire }
