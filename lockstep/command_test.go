package lockstep_test

import (
	"encoding/hex"
	"testing"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// TestCommandEncoding pins a command's encoding, which this package owns
// through Command's codec keys: the protocol's Server_Tick and the join
// point payload both carry commands as these bytes, so a change here is a
// protocol and payload format change.
func TestCommandEncoding(t *testing.T) {
	c := lockstep.Command{Tick: 77, Seq: 1, MapID: -1, Kind: lockstep.KindSetSpeed, Player: 4, Payload: []byte{2}}
	b, err := codec.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = "86a164c40102a16bcdff00a16dffa17004a17101a1744d" // keys d k m p q t, sorted
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
	var back lockstep.Command
	if err := codec.Decode(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Tick != c.Tick || back.Seq != c.Seq || back.MapID != c.MapID || back.Kind != c.Kind || back.Player != c.Player || string(back.Payload) != string(c.Payload) {
		t.Errorf("decoded %+v, want %+v", back, c)
	}
}
