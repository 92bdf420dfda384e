package host_test

import (
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// TestModListAnnouncesDatabases checks that Server_ModList lists the
// host's def databases, sorted by type, and that a client which declares
// exactly that list is accepted: a client learns what to declare before
// it is refused.
func TestModListAnnouncesDatabases(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16))
	c := dialRaw(t, h.addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	if len(ml.Databases) != len(testDefs) {
		t.Fatalf("Server_ModList lists %d databases, the host has %d", len(ml.Databases), len(testDefs))
	}
	for i, d := range ml.Databases {
		if i > 0 && ml.Databases[i-1].Type >= d.Type {
			t.Errorf("databases not sorted by type: %q after %q", d.Type, ml.Databases[i-1].Type)
		}
		found := false
		for _, h := range testDefs {
			found = found || h.Type == d.Type && h.Count == d.Count && h.Hash == d.Hash
		}
		if !found {
			t.Errorf("announced %+v, which the host does not have", d)
		}
	}
	c.send(&wire.ClientDefs{Databases: ml.Databases})
	c.syncClockUntil(wire.IDServerDefsOK)
}
