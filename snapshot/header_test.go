package snapshot

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// rawPayload lays out h with empty blobs, as a host would send it.
func rawPayload(t *testing.T, h *Header) []byte {
	t.Helper()
	hb, err := codec.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(hb)))
	b = binary.BigEndian.AppendUint64(b, xxhash.Sum64(hb))
	return append(b, hb...)
}

// TestHeaderLimits holds the header rules of the protocol spec's section
// 8.2: a receiver refuses a header over any of them, and the host never
// builds one.
func TestHeaderLimits(t *testing.T) {
	maps := func(n int) []MapInfo {
		out := make([]MapInfo, n)
		for i := range out {
			out[i].ID = int32(i)
		}
		return out
	}
	cmd := func(size int) lockstep.Command { return lockstep.Command{Tick: 5, Payload: make([]byte, size)} }
	tests := []struct {
		name string
		h    Header
		ok   bool
	}{
		{"valid", Header{Tick: 5, Granted: 9, Maps: maps(2), Commands: []MapCommands{
			{MapID: lockstep.WorldScope, Commands: []lockstep.Command{cmd(MaxCommandPayload)}}, {MapID: 1}}}, true},
		{"most maps", Header{Tick: 5, Granted: 5, Maps: maps(MaxMaps)}, true},
		{"too many maps", Header{Tick: 5, Granted: 5, Maps: maps(MaxMaps + 1)}, false},
		{"grant below tick", Header{Tick: 5, Granted: 4, Maps: maps(1)}, false},
		{"map named twice", Header{Tick: 5, Granted: 5, Maps: []MapInfo{{ID: 3}, {ID: 3}}}, false},
		{"map's commands twice", Header{Tick: 5, Granted: 6, Maps: maps(1), Commands: []MapCommands{{MapID: 0}, {MapID: 0}}}, false},
		{"command payload too large", Header{Tick: 5, Granted: 6, Maps: maps(1), Commands: []MapCommands{
			{MapID: 0, Commands: []lockstep.Command{cmd(MaxCommandPayload + 1)}}}}, false},
	}
	for _, tc := range tests {
		_, err := Parse(rawPayload(t, &tc.h))
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrMalformed)) {
			t.Errorf("%s: Parse: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
