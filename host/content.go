package host

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Content sync over the session connection (docs/protocol.md, section
// 17.4): a host that shares its content (Content.Share) offers its
// manifest in Server_ModList, and a joiner whose def databases differ
// may ask, before Client_Defs, for the manifest and for files by hash.
// The joiner's reader answers, chunk by chunk, drawing on the uplink as
// world transfers do: an upload slot per answer, the rate cap per chunk.

// contentQueue is how many bytes of content chunks may wait in a
// joiner's send queue: two chunks, so a joiner that reads slowly slows
// only itself, and the host reads a file no faster than it is taken.
const contentQueue = 2 * (wire.MaxChunkData + 1024)

// errNoShare is the refusal of a content request to a host that made no
// offer.
var errNoShare = errors.New("the host does not share its content")

// contentOffer is Server_ModList's content offer: the manifest's hash
// and size, or nothing when the host does not share.
func contentOffer(share *modsync.Handler) ([]byte, uint32) {
	if share == nil || len(share.Manifest()) == 0 || len(share.Manifest()) > wire.MaxContentManifest {
		return nil, 0
	}
	h := share.ManifestHash()
	return h[:], uint32(len(share.Manifest()))
}

// serveContent answers the joiner's content requests, cg first, each
// within the handshake deadline of the last answer's end, until it
// sends its Client_Defs, which it returns. All the answers of one
// connection carry at most twice what the host shares.
func (p *peer) serveContent(share *modsync.Handler, cg *wire.ClientContentGet) (*wire.ClientDefs, error) {
	if h, _ := contentOffer(share); h == nil {
		return nil, refuse(wire.ReasonBadPacket, "%s", errNoShare)
	}
	budget := 2 * share.Bytes()
	p.log.Info("serving content", "manifest", share.ManifestHash().String()[:12])
	for {
		if err := p.answerContent(share, cg, &budget); err != nil {
			return nil, err
		}
		_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.pending.Timeout(p.srv.cfg.Timeouts.Handshake)))
		p.pend.Progress(time.Now())
		pkt, err := p.read(wire.IDClientDefs, wire.IDClientContentGet)
		if err != nil {
			return nil, err
		}
		if cd, ok := pkt.(*wire.ClientDefs); ok {
			return cd, nil
		}
		cg = pkt.(*wire.ClientContentGet)
	}
}

// contentSource is what one request reads: the manifest's bytes, or a
// shared file.
type contentSource struct {
	r        io.ReaderAt
	size     int64
	compress bool
	close    func()
}

// openContent opens what cg asks for; a hash not published is a bad
// packet.
func openContent(share *modsync.Handler, cg *wire.ClientContentGet) (contentSource, error) {
	if len(cg.Hash) == 0 {
		m := share.Manifest()
		return contentSource{r: bytesReaderAt(m), size: int64(len(m)), compress: true, close: func() {}}, nil
	}
	f, size, compress, err := share.Open(modsync.Sum(cg.Hash))
	if errors.Is(err, modsync.ErrNotPublished) {
		return contentSource{}, refuse(wire.ReasonBadPacket, "content %x: %s", cg.Hash, err)
	}
	if err != nil {
		return contentSource{}, refuse(wire.ReasonGeneric, "The host cannot send a shared file: %s.", err)
	}
	return contentSource{r: f, size: size, compress: compress, close: func() { f.Close() }}, nil
}

// answerContent sends the chunks of one request, from its offset to the
// end, once the request has an upload slot, each chunk drawn from the
// upload cap.
func (p *peer) answerContent(share *modsync.Handler, cg *wire.ClientContentGet, budget *int64) error {
	src, err := openContent(share, cg)
	if err != nil {
		return err
	}
	defer src.close()
	if cg.Offset > uint64(src.size) {
		return refuse(wire.ReasonBadPacket, "content request from byte %d of a %d-byte file", cg.Offset, src.size)
	}
	if *budget -= src.size - int64(cg.Offset); *budget < 0 {
		return refuse(wire.ReasonGeneric, "The client asked for more content than twice what the host shares.")
	}
	u := p.srv.uplink
	up := u.enter("content: " + p.nc.RemoteAddr().String())
	defer u.leave(up)
	select {
	case <-up.ready:
	case <-p.conn.closing:
		return net.ErrClosed
	case <-p.srv.sess.done:
		return net.ErrClosed
	}
	// Two chunks and their frames fit in the send queue however small
	// it is configured.
	buf := make([]byte, max(1<<10, min(u.chunk(wire.MaxChunkData), int(p.conn.maxBytes/4))))
	off := int64(cg.Offset)
	for first := true; first || off < src.size; first = false {
		n := int(min(int64(len(buf)), src.size-off))
		if _, err := src.r.ReadAt(buf[:n], off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
			return refuse(wire.ReasonGeneric, "The host could not read a shared file: %s.", err)
		}
		pkt := &wire.ServerContent{Hash: cg.Hash, Offset: uint64(off), Total: uint64(src.size), Length: uint32(n), Data: buf[:n]}
		if src.compress && n > 0 {
			codeChunk(pkt, p.conn.codec)
		}
		if err := p.sendContent(pkt); err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// codeChunk compresses a chunk with the joiner's codec when that makes
// it smaller.
func codeChunk(pkt *wire.ServerContent, c snapshot.Codec) {
	blob, err := snapshot.Compress(pkt.Data, snapshot.Compression{Codec: c})
	if err != nil || len(blob.Data) >= len(pkt.Data) {
		return
	}
	pkt.Data, pkt.Coding = blob.Data, uint8(c)+1
}

// sendContent waits for the chunk's time under the upload cap and for
// room in the send queue, then queues it.
func (p *peer) sendContent(pkt *wire.ServerContent) error {
	frame, err := wire.Marshal(nil, pkt)
	if err != nil {
		return err
	}
	if wait := time.Until(p.srv.uplink.take(len(frame))); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-p.conn.closing:
			t.Stop()
			return net.ErrClosed
		}
	}
	if !p.conn.sendWithin(frame, min(contentQueue, p.conn.maxBytes)) {
		return net.ErrClosed
	}
	return nil
}

// bytesReaderAt reads a byte slice at an offset.
type bytesReaderAt []byte

// ReadAt implements io.ReaderAt.
func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// ContentHandler is the host's shared content for its HTTP listener
// (GET /content/…, docs/protocol.md section 17.3), or nil when the host
// does not share: each file takes an upload slot for its response (none
// free: 503) and its bytes are drawn from the upload cap, as world
// transfers' are.
func (s *Server) ContentHandler() http.Handler {
	share := s.sess.defs.Load().content.Share
	if share == nil {
		return nil
	}
	return share
}

// gateContent makes share's HTTP responses take upload slots and the
// upload cap of u, and at most modsync.DefaultStreams at once whatever
// the slots.
func gateContent(share *modsync.Handler, u *uplink) {
	streams := make(chan struct{}, modsync.DefaultStreams)
	share.Gate = func(r *http.Request) (func(), bool) {
		select {
		case streams <- struct{}{}:
		default:
			return nil, false
		}
		up := u.enter("content over HTTP: " + r.RemoteAddr)
		select {
		case <-up.ready:
			return func() { u.leave(up); <-streams }, true
		default:
			u.leave(up)
			<-streams
			return nil, false
		}
	}
	share.Pace = func(n int) {
		if wait := time.Until(u.take(n)); wait > 0 {
			time.Sleep(wait)
		}
	}
}
