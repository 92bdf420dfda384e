package host_test

import (
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// msgpackMap builds a msgpack map body by hand from its keys (one-letter
// strs) and their values' raw bytes, in the order given, so a test sends
// exactly the forms docs/protocol.md section 1 allows, not the ones the
// Go encoder happens to pick.
func msgpackMap(kv ...string) []byte {
	b := []byte{0x80 | byte(len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		b = append(b, 0xa1, kv[i][0])
		b = append(b, kv[i+1]...)
	}
	return b
}

// fixstr is s as a msgpack fixstr (under 32 bytes).
func fixstr(s string) string { return string(append([]byte{0xa0 | byte(len(s))}, s...)) }

// TestEmptyValuesMeanNone joins with each field the spec calls "empty, or
// ..." sent in another of section 1's empty forms: an empty bin (c4 00)
// or an empty array (90) where the host writes nil (c0). Each must mean
// what nil does — no token, no proof, no codecs, nothing held — and admit
// the client as a new player, not refuse it.
func TestEmptyValuesMeanNone(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(2, 64))
	const (
		nilv     = "\xc0"
		emptyBin = "\xc4\x00"
		emptyArr = "\x90"
	)
	protocol := msgpackMap("v", "\x04")
	cases := []struct {
		name     string
		protocol []byte
		username []byte
	}{
		{"nil token (section 15's form)", protocol, msgpackMap("k", nilv, "n", fixstr("Nilly"))},
		{"token as empty bin", protocol, msgpackMap("k", emptyBin, "n", fixstr("Binny"))},
		{"token as empty str", protocol, msgpackMap("k", "\xa0", "n", fixstr("Strie"))},
		{"password proof as empty bin", protocol, msgpackMap("n", fixstr("Proofy"), "p", emptyBin)},
		{"arbiter proof as empty bin", protocol, msgpackMap("a", emptyBin, "n", fixstr("Arbie"))},
		{"codecs as empty bin", msgpackMap("v", "\x04", "z", emptyBin), msgpackMap("n", fixstr("Codey"))},
		{"every empty field at once", msgpackMap("v", "\x04", "z", emptyBin),
			msgpackMap("a", emptyBin, "k", emptyBin, "n", fixstr("Allie"), "p", emptyBin, "r", emptyArr, "s", "\xc2")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, h.addr)
			c.t = t
			c.writeRaw(wire.AppendFrame(nil, wire.IDClientProtocol, tc.protocol))
			c.expect(wire.IDServerModList)
			dbs := make([]wire.DefSummary, len(testDefs))
			for i, d := range testDefs {
				dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
			}
			c.send(&wire.ClientDefs{Databases: dbs})
			c.syncClockUntil(wire.IDServerDefsOK)
			c.writeRaw(wire.AppendFrame(nil, wire.IDClientUsername, tc.username))
			s := c.syncClockUntil(wire.IDServerSession).(*wire.ServerSession)
			if len(s.Token) != wire.TokenSize {
				t.Fatalf("admitted with a token of %d bytes", len(s.Token))
			}
			c.send(&wire.ClientLeave{Why: "done"})
		})
	}
}
