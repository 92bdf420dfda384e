package wire

import (
	"bytes"
	"runtime"
	"testing"
)

// TestBulkFieldsDecodeInPlace: a packet's large byte field is decoded
// into one buffer of about its own size. The decoder library's own
// growth, 4 KiB at a time with a copy at each step, allocated 8.5 MiB
// for one 256 KiB chunk and made a 40 MiB download cost as much CPU as
// inflating it.
func TestBulkFieldsDecodeInPlace(t *testing.T) {
	tests := []struct {
		name string
		p    Packet
		data func(Packet) []byte
		most int
	}{
		{"Server_WorldData", &ServerWorldData{Offset: 7, Total: 1 << 30, Data: fill(MaxChunkData)},
			func(p Packet) []byte { return p.(*ServerWorldData).Data }, MaxChunkData},
		{"Client_Upload", &ClientUpload{Request: 3, Offset: 0, Total: 1 << 30, Data: fill(MaxChunkData)},
			func(p Packet) []byte { return p.(*ClientUpload).Data }, MaxChunkData},
		{"Client_Command", &ClientCommand{MapID: 2, Kind: 1, Payload: fill(MaxCommandPayload)},
			func(p Packet) []byte { return p.(*ClientCommand).Payload }, MaxCommandPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := MustMarshal(tt.p)
			id, body := ID(frame[4]), frame[5:]
			const runs = 20
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				got, err := Decode(id, body)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(tt.data(got), tt.data(tt.p)) {
					t.Fatal("decoded bytes differ from the encoded ones")
				}
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / runs
			// The field's own bytes, the packet and a few small allocations.
			if limit := uint64(tt.most) + 4<<10; per > limit {
				t.Fatalf("decoding one %d-byte field allocated %d bytes, want at most %d", tt.most, per, limit)
			}
		})
	}
}

// TestBulkFieldAbsentOrEmpty: making room for a byte field does not
// change what an absent, nil or empty field decodes to.
func TestBulkFieldAbsentOrEmpty(t *testing.T) {
	for _, tt := range []struct {
		name string
		hex  []byte // msgpack body
		nil_ bool
	}{
		{"absent", []byte{0x82, 0xa1, 'k', 0x01, 0xa1, 'm', 0x02}, true},
		{"nil", []byte{0x83, 0xa1, 'd', 0xc0, 0xa1, 'k', 0x01, 0xa1, 'm', 0x02}, true},
		{"empty", []byte{0x83, 0xa1, 'd', 0xc4, 0x00, 0xa1, 'k', 0x01, 0xa1, 'm', 0x02}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p ClientCommand
			if err := Unmarshal(tt.hex, &p); err != nil {
				t.Fatal(err)
			}
			if p.Kind != 1 || p.MapID != 2 || len(p.Payload) != 0 || (p.Payload == nil) != tt.nil_ {
				t.Fatalf("decoded %+v (payload nil: %v), want kind 1, map 2, an empty payload that is nil: %v", p, p.Payload == nil, tt.nil_)
			}
		})
	}
}

func fill(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}
