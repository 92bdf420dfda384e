package join_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// fakeHost runs the host's side of the handshake by hand, then sends the
// world payload through send, so a test can make the transfer misbehave.
func fakeHost(t *testing.T, send func(w io.Writer, payload []byte, total uint64)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sim := locksteptest.New(3, 64<<10)
	for i := 0; i < 3; i++ {
		sim.Apply(locksteptest.Counters{}.AddCommand(int32(i), 1))
	}
	point, err := snapshot.Build(sim, snapshot.BuildOptions{Level: snapshot.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(point, 1, sim.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	payload := pl.Bytes()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		fr := wire.NewFrameReader(bufio.NewReader(nc), 0)
		next := func() wire.Packet {
			id, body, err := fr.Next()
			if err != nil {
				return nil
			}
			p, _ := wire.Decode(id, body)
			return p
		}
		next() // protocol
		nc.Write(wire.MustMarshal(&wire.ServerModList{GameVersion: "1.5"}))
		next() // defs
		nc.Write(wire.MustMarshal(&wire.ServerDefsOK{GameName: "fake", PlayerID: 1}))
		next() // username
		send(nc, payload, pl.Total())
		// Read acknowledgements until the client gives up.
		for next() != nil {
		}
	}()
	return ln.Addr().String()
}

func chunks(w io.Writer, b []byte, total uint64) {
	for off := 0; off < len(b); off += 1000 {
		end := min(off+1000, len(b))
		w.Write(wire.MustMarshal(&wire.ServerWorldData{Offset: uint64(off), Total: total, Data: b[off:end]}))
	}
}

func TestBadTransfersRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(w io.Writer, payload []byte, total uint64)
		want string
	}{
		{"truncated", func(w io.Writer, p []byte, total uint64) {
			chunks(w, p[:len(p)/2], total)
			w.(net.Conn).Close() // the host hangs up mid-transfer
		}, "EOF|connection reset"},
		{"total larger than the blobs", func(w io.Writer, p []byte, total uint64) {
			chunks(w, p, total+100)
		}, "blobs take"},
		{"total over the limit", func(w io.Writer, p []byte, total uint64) {
			chunks(w, p, 3<<30)
		}, "over limit"},
		{"blob fails its hash", func(w io.Writer, p []byte, total uint64) {
			bad := append([]byte(nil), p...)
			bad[len(bad)-10] ^= 0xff // inside the last map's blob
			chunks(w, bad, total)
		}, "hash mismatch"},
		{"header fails its hash", func(w io.Writer, p []byte, total uint64) {
			bad := append([]byte(nil), p...)
			bad[14] ^= 0xff
			chunks(w, bad, total)
		}, "header hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeHost(t, tc.send)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := join.Join(ctx, join.Config{Addr: addr, Name: "Alice", Loader: locksteptest.Load,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err == nil {
				t.Fatal("join succeeded")
			}
			if !slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(err.Error(), w) }) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			var re *join.RejectedError
			if errors.As(err, &re) {
				t.Fatalf("a bad transfer reads as a refusal: %v", err)
			}
		})
	}
}
