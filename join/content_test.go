package join_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// fakeContentHost accepts connections on loopback, offers a manifest of
// the given bytes and answers each Client_ContentGet with answer's
// chunks (the n-th request of all, counting from 0).
func fakeContentHost(t *testing.T, manifest []byte, answer func(n int, get *wire.ClientContentGet) []wire.Packet) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sum := sha256.Sum256(manifest)
	n := 0
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			fr := wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)
			for {
				id, body, err := fr.Next()
				if err != nil {
					break
				}
				p, _ := wire.Decode(id, body)
				var out []wire.Packet
				switch p := p.(type) {
				case *wire.ClientProtocol:
					out = []wire.Packet{&wire.ServerModList{GameVersion: "1.6", ContentHash: sum[:], ContentSize: uint32(len(manifest))}}
				case *wire.ClientContentGet:
					out = answer(n, p)
					n++
				}
				for _, q := range out {
					nc.Write(wire.MustMarshal(q))
				}
			}
			nc.Close()
		}
	}()
	return ln.Addr().String()
}

// mine are def databases the fake host does not announce: a joiner
// with them lacks its content.
var mine = []defs.Summary{{Type: "ThingDef", Count: 1, Hash: 1}}

// contentChunk is a stored chunk of data from offset.
func contentChunk(hash []byte, data []byte, off, total int) *wire.ServerContent {
	return &wire.ServerContent{Hash: hash, Offset: uint64(off), Total: uint64(total), Length: uint32(len(data)), Data: data}
}

// TestContentConnHostile: a host that sends another manifest than it
// offered, chunks out of order, of another total or a bomb is refused;
// a file with a flipped bit is refused and fetched once more.
func TestContentConnHostile(t *testing.T) {
	file := []byte("<Defs><ThingDef><defName>A</defName></ThingDef></Defs>")
	fsum := sha256.Sum256(file)
	f := modsync.File{Path: "Defs/A.xml", Size: int64(len(file)), Hash: fsum, Kind: modsync.KindDefs}
	manifest := []byte("not a manifest, but offered")
	bomb, err := snapshot.Compress(make([]byte, 1<<20), snapshot.Compression{Codec: snapshot.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(file)
	flipped[3] ^= 1
	tests := []struct {
		name    string
		answer  func(n int, g *wire.ClientContentGet) []wire.Packet
		wantErr string
		refused int
	}{
		{"out of order", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{contentChunk(g.Hash, file[10:], 10, len(file))}
		}, "Server_Content", 0},
		{"another total", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{contentChunk(g.Hash, append(bytes.Clone(file), 'x'), 0, len(file)+1)}
		}, "Server_Content", 0},
		{"another file", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{contentChunk(bytes.Repeat([]byte{1}, 32), file, 0, len(file))}
		}, "Server_Content", 0},
		{"empty chunks", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{contentChunk(g.Hash, nil, 0, len(file)), contentChunk(g.Hash, nil, 0, len(file))}
		}, "empty Server_Content", 0},
		{"bomb", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{&wire.ServerContent{Hash: g.Hash, Total: uint64(len(file)), Length: uint32(len(file)), Coding: wire.ContentZstd, Data: bomb.Data}}
		}, "Server_Content", 0},
		{"flipped bit, then right", func(n int, g *wire.ClientContentGet) []wire.Packet {
			if n == 0 {
				return []wire.Packet{contentChunk(g.Hash, flipped, 0, len(file))}
			}
			return []wire.Packet{contentChunk(g.Hash, file, 0, len(file))}
		}, "", 1},
		{"flipped bit twice", func(_ int, g *wire.ClientContentGet) []wire.Packet {
			return []wire.Packet{contentChunk(g.Hash, flipped, 0, len(file))}
		}, "hash", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeContentHost(t, manifest, tc.answer)
			cache, err := modsync.OpenCache(filepath.Join(t.TempDir(), "cache"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var st modsync.Stats
			offer, err := join.FetchContent(ctx, join.Config{Addr: addr, Databases: mine}, func(ctx context.Context, cc *join.ContentConn) error {
				var err error
				st, err = (&modsync.Fetcher{Source: cc, Cache: cache, Limits: modsync.DefaultLimits}).Fetch(ctx, []modsync.File{f})
				return err
			})
			if !offer.Shared {
				t.Fatal("no offer seen")
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("fetch: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("fetch: %v, want an error about %q", err, tc.wantErr)
			}
			if st.Refused != tc.refused {
				t.Errorf("refused %d, want %d", st.Refused, tc.refused)
			}
			if has := cache.Has(fsum, f.Size); has != (tc.wantErr == "") {
				t.Errorf("in the cache: %v", has)
			}
		})
	}

	// A manifest other than the one offered is refused before it is
	// decoded.
	addr := fakeContentHost(t, manifest, func(_ int, g *wire.ClientContentGet) []wire.Packet {
		other := bytes.Clone(manifest)
		other[0] ^= 1
		return []wire.Packet{contentChunk(g.Hash, other, 0, len(other))}
	})
	_, err = join.FetchContent(context.Background(), join.Config{Addr: addr, Databases: mine}, func(ctx context.Context, cc *join.ContentConn) error {
		_, _, err := cc.Manifest(ctx, modsync.DefaultLimits)
		return err
	})
	var pe *join.ProtocolError
	if err == nil || !strings.Contains(err.Error(), "not the one the host offered") || !errors.As(err, &pe) {
		t.Errorf("another manifest: %v, want a protocol error saying it is not the one offered", err)
	}
}
