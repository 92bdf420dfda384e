package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// Limits of a Header's arrays (the protocol spec, section 8.2), beside
// MaxHeader: at most MaxMaps maps (wire.MaxHashMaps, the most a hash
// report can name), one command list per map and the world scope, and
// command payloads of at most MaxCommandPayload bytes
// (wire.MaxCommandPayload, the most a Server_Tick carries).
const (
	MaxMaps           = 4096
	MaxCommandPayload = 64 << 10
)

// MaxHeader bounds the encoded Header of a payload.
const MaxHeader = 64 << 20

// BlobInfo describes one blob in a payload.
type BlobInfo struct {
	Size    uint64 `codec:"s"`
	RawSize uint64 `codec:"r"`
	Hash    uint64 `codec:"h"`
	// Codec is how the blob is compressed; absent (0) is Gzip, so a
	// header from before codecs were named reads as it did.
	Codec Codec `codec:"z,omitempty"`
}

// Blob pairs the blob's bytes with what the header says of them.
func (bi BlobInfo) Blob(data []byte) Blob {
	return Blob{Data: data, RawSize: bi.RawSize, Hash: bi.Hash, Codec: bi.Codec}
}

// MapInfo describes one map in a payload.
type MapInfo struct {
	ID        int32    `codec:"i"`
	Blob      BlobInfo `codec:"b"`
	StateHash uint64   `codec:"x"`
	// Cut, when not nil, says the blob is the map's encoding with its
	// regenerable section left out at this offset, because the joiner
	// said it makes that section itself; Blob describes the bytes sent.
	Cut *uint64 `codec:"o,omitempty"`
}

// MapCommands are the commands of one map (or lockstep.WorldScope) queued
// since the join point, in the order they were applied.
type MapCommands struct {
	MapID    int32              `codec:"m"`
	Commands []lockstep.Command `codec:"c"`
}

// Header is the msgpack part of a payload.
type Header struct {
	Faction int32 `codec:"f"`
	// Tick is the join point's tick: the state's tick.
	Tick uint64 `codec:"t"`
	// Granted is the host's grant when the joiner was admitted: every
	// command below it is in Commands, and the joiner may simulate up to
	// it.
	Granted   uint64        `codec:"g"`
	WorldHash uint64        `codec:"h"`
	World     BlobInfo      `codec:"w"`
	Maps      []MapInfo     `codec:"m"`
	Commands  []MapCommands `codec:"c"`
	// Held lists, in ascending order, the blobs (0 the world, 1+i map i)
	// left out of the payload because the joiner said it holds them: a
	// resumed download. Their sizes in World and Maps still describe them.
	Held []uint32 `codec:"k"`
}

// check holds h to the limits and rules of a header that do not depend
// on the payload around it: MaxMaps maps with distinct IDs, the grant not
// below the tick, at most one command list per map or the world scope,
// and no command payload over MaxCommandPayload. (A command list may name
// a map the header does not list: the game may add maps after the cut.)
func (h *Header) check() error {
	if len(h.Maps) > MaxMaps {
		return fmt.Errorf("%d maps exceeds %d", len(h.Maps), MaxMaps)
	}
	if h.Granted < h.Tick {
		return fmt.Errorf("grant %d before tick %d", h.Granted, h.Tick)
	}
	if h.Granted > lockstep.MaxTick {
		return fmt.Errorf("tick %d, grant %d: past the last tick a session reaches, %d", h.Tick, h.Granted, uint64(lockstep.MaxTick))
	}
	ids := make(map[int32]bool, len(h.Maps))
	for _, m := range h.Maps {
		if ids[m.ID] {
			return fmt.Errorf("map %d listed twice", m.ID)
		}
		if m.Cut != nil && *m.Cut > m.Blob.RawSize {
			return fmt.Errorf("map %d: section cut at %d of %d raw bytes", m.ID, *m.Cut, m.Blob.RawSize)
		}
		ids[m.ID] = true
	}
	listed := make(map[int32]bool, len(h.Commands))
	for _, mc := range h.Commands {
		if listed[mc.MapID] {
			return fmt.Errorf("commands for map %d listed twice", mc.MapID)
		}
		listed[mc.MapID] = true
		for _, c := range mc.Commands {
			if len(c.Payload) > MaxCommandPayload {
				return fmt.Errorf("a command payload of %d bytes exceeds %d", len(c.Payload), MaxCommandPayload)
			}
		}
	}
	return nil
}

// Payload is a join point laid out for sending: a header followed by the
// shared blobs. It refers to the Point's bytes without copying them.
type Payload struct {
	segs    [][]byte
	blobs   []int    // blob index of each segment; -1 for the header
	hashes  []uint64 // hash of each blob, by blob index
	sizes   []uint64 // size of each blob, by blob index
	total   uint64
	held    uint64 // bytes of the blobs left out as held
	thin    uint64 // bytes the thin map blobs spare
	heldIdx []int  // the blobs left out
}

// NewPayload lays out p for one joiner of the given faction with the
// commands queued since p was cut and the grant at admission.
func NewPayload(p *Point, faction int32, granted uint64, cmds []MapCommands) (*Payload, error) {
	return NewResumedPayload(p, faction, granted, cmds, nil)
}

// NewResumedPayload is NewPayload for a joiner that already holds the
// blobs whose hashes held contains: those are listed in Header.Held and
// left out.
func NewResumedPayload(p *Point, faction int32, granted uint64, cmds []MapCommands, held map[uint64]bool) (*Payload, error) {
	return NewJoinPayload(p, JoinLayout{Faction: faction, Granted: granted, Commands: cmds, Held: held})
}

// JoinLayout is what a payload is laid out with for one joiner.
type JoinLayout struct {
	Faction  int32
	Granted  uint64        // the grant at admission
	Commands []MapCommands // queued since the point was cut
	// Held are the hashes of the blobs the joiner holds: left out.
	Held map[uint64]bool
	// Thin are the point's thin map blobs; Made, by map ID, the section
	// hashes the joiner makes itself. A map whose section's hash is in
	// Made and that has a thin blob is sent thin (MapInfo.Cut).
	Thin *ThinMaps
	Made map[int32]uint64
}

// thinBlob is the blob of map i sent to a joiner with layout l, and the
// offset its section was cut at (nil: the whole blob).
func (l *JoinLayout) thinBlob(i int, m MapPoint) (Blob, *uint64) {
	if l.Thin == nil || m.Section == nil || i >= len(l.Thin.Blobs) || l.Thin.Blobs[i].Data == nil {
		return m.Blob, nil
	}
	if h, ok := l.Made[m.ID]; !ok || h != m.Section.Hash {
		return m.Blob, nil
	}
	off := l.Thin.Offsets[i]
	return l.Thin.Blobs[i], &off
}

// NewJoinPayload lays out p for one joiner as l says.
func NewJoinPayload(p *Point, l JoinLayout) (*Payload, error) {
	faction, granted, cmds, held := l.Faction, l.Granted, l.Commands, l.Held
	if granted < p.Tick {
		return nil, fmt.Errorf("grant %d before join point tick %d", granted, p.Tick)
	}
	h := Header{
		Faction:   faction,
		Tick:      p.Tick,
		Granted:   granted,
		WorldHash: p.WorldHash,
		World:     info(p.World),
		Maps:      make([]MapInfo, len(p.Maps)),
		Commands:  cmds,
	}
	pl := &Payload{segs: make([][]byte, 1, 2+len(p.Maps)), blobs: make([]int, 1, 2+len(p.Maps))}
	pl.blobs[0] = -1
	add := func(i int, b Blob) {
		pl.hashes = append(pl.hashes, b.Hash)
		pl.sizes = append(pl.sizes, uint64(len(b.Data)))
		if held[b.Hash] {
			h.Held = append(h.Held, uint32(i))
			pl.heldIdx = append(pl.heldIdx, i)
			pl.held += uint64(len(b.Data))
			return
		}
		pl.segs = append(pl.segs, b.Data)
		pl.blobs = append(pl.blobs, i)
	}
	add(0, p.World)
	for i, m := range p.Maps {
		b, cut := l.thinBlob(i, m)
		h.Maps[i] = MapInfo{ID: m.ID, Blob: info(b), StateHash: m.StateHash, Cut: cut}
		if cut != nil {
			pl.thin += uint64(len(m.Blob.Data)) - min(uint64(len(m.Blob.Data)), uint64(len(b.Data)))
		}
		add(1+i, b)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	hb, err := codec.Encode(&h)
	if err != nil {
		return nil, fmt.Errorf("encode header: %w", err)
	}
	if len(hb) > MaxHeader {
		return nil, fmt.Errorf("header of %d bytes: %w", len(hb), ErrTooLarge)
	}
	hdr := binary.BigEndian.AppendUint32(make([]byte, 0, prefixSize+len(hb)), uint32(len(hb)))
	hdr = binary.BigEndian.AppendUint64(hdr, xxhash.Sum64(hb))
	pl.segs[0] = append(hdr, hb...)
	for _, s := range pl.segs {
		pl.total += uint64(len(s))
	}
	return pl, nil
}

// Held is how many bytes of blobs the payload leaves out because the
// joiner holds them.
func (p *Payload) Held() uint64 { return p.held }

// Thinned is how many bytes the payload spares by sending maps without
// the sections the joiner makes itself.
func (p *Payload) Thinned() uint64 { return p.thin }

// BlobSize is the compressed size of blob i, sent or held.
func (p *Payload) BlobSize(i int) uint64 { return p.sizes[i] }

// HeldBlobs returns the blobs left out because the joiner holds them.
func (p *Payload) HeldBlobs() []int { return p.heldIdx }

// BlobHash is the hash of blob i (0 the world, 1+i map i), sent or held.
func (p *Payload) BlobHash(i int) uint64 { return p.hashes[i] }

// Complete returns the blobs (0 the world, 1+i map i) that lie wholly in
// the first acked bytes of the payload, in order.
func (p *Payload) Complete(acked uint64) []int { return p.CompletedIn(0, acked) }

// CompletedIn returns the blobs that the bytes from..to completed: those
// that end after the first from bytes and within the first to, in order.
// A sender that moves from one offset to the next learns each blob once.
func (p *Payload) CompletedIn(from, to uint64) []int {
	var out []int
	pos := uint64(0)
	for i, s := range p.segs {
		pos += uint64(len(s))
		if pos > to {
			break
		}
		if pos > from && p.blobs[i] >= 0 {
			out = append(out, p.blobs[i])
		}
	}
	return out
}

func info(b Blob) BlobInfo {
	return BlobInfo{Size: uint64(len(b.Data)), RawSize: b.RawSize, Hash: b.Hash, Codec: b.Codec}
}

// Total is the payload's size in bytes.
func (p *Payload) Total() uint64 { return p.total }

// Chunk returns up to max bytes starting at offset, stopping at the end of
// the header or blob that holds offset, so it never copies: the result
// aliases the shared bytes (do not modify it).
func (p *Payload) Chunk(offset uint64, max int) []byte {
	if offset >= p.total || max <= 0 {
		return nil
	}
	pos := uint64(0)
	for _, s := range p.segs {
		end := pos + uint64(len(s))
		if offset < end {
			part := s[offset-pos:]
			return part[:min(uint64(len(part)), uint64(max))]
		}
		pos = end
	}
	return nil
}

// Errors of reassembly and parsing.
var (
	ErrOutOfOrder = errors.New("chunk out of order")
	ErrMalformed  = errors.New("malformed payload")
)

// Parsed is a payload split into its parts.
type Parsed struct {
	Header Header
	World  Blob
	Maps   []Blob // in Header.Maps order
}

// Parse splits a complete payload and checks its header hash and that its
// sizes add up. Blob hashes are checked by Decompress. A resumed payload,
// which leaves out blobs the joiner holds, is refused.
func Parse(b []byte) (*Parsed, error) {
	p := &Parsed{}
	r := NewReceiver(uint64(len(b)), func(i int, blob Blob) error {
		if i == 0 {
			p.World = blob
		} else {
			p.Maps = append(p.Maps, blob)
		}
		return nil
	})

	done, err := r.Add(0, uint64(len(b)), b)
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, fmt.Errorf("%w: %d bytes end before the payload does", ErrMalformed, len(b))
	}
	p.Header = *r.Header()
	return p, nil
}

// Load decompresses every blob of a parsed payload, within lim, and
// rebuilds the simulation with load. It verifies the rebuilt state against
// the header's hashes.
func (p *Parsed) Load(load lockstep.Loader, lim Limits) (lockstep.Sim, error) {
	if len(p.Maps) != len(p.Header.Maps) {
		return nil, fmt.Errorf("%d map blobs for a header of %d", len(p.Maps), len(p.Header.Maps))
	}
	return p.Header.LoadBlobs(lim, p.Inflate, load, nil)
}

// Inflate checks and inflates blob i (0 the world, 1+i map i) as
// Decompress does, naming the blob in its error.
func (p *Parsed) Inflate(i int, maxRaw int64) ([]byte, error) {
	b := p.World
	if i > 0 {
		if i > len(p.Maps) {
			return nil, fmt.Errorf("no blob %d in a payload of %d maps", i, len(p.Maps))
		}
		b = p.Maps[i-1]
	}
	raw, err := Decompress(b, maxRaw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Header.BlobName(i), err)
	}
	return raw, nil
}

// Load rebuilds the simulation from the decompressed world and maps (in
// header order) and checks the result against the header: tick, every
// map's state hash and the world hash.
func (h *Header) Load(load lockstep.Loader, world []byte, maps [][]byte) (lockstep.Sim, error) {
	if len(maps) != len(h.Maps) {
		return nil, fmt.Errorf("%d maps for a header of %d", len(maps), len(h.Maps))
	}
	blobs := make([]lockstep.MapBlob, len(maps))
	for i, m := range maps {
		blobs[i] = lockstep.MapBlob{ID: h.Maps[i].ID, Data: m}
	}
	sim, err := load(world, blobs)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := h.Verify(sim); err != nil {
		return nil, err
	}
	return sim, nil
}

// Verify checks a rebuilt simulation against the header: tick, every map's
// state hash and the world hash.
func (h *Header) Verify(sim lockstep.Sim) error {
	if sim.Tick() != h.Tick {
		return fmt.Errorf("loaded world is at tick %d, header says %d", sim.Tick(), h.Tick)
	}
	ids := make([]int32, len(h.Maps))
	hashes := make([]uint64, len(h.Maps))
	for i, m := range h.Maps {
		got, ok := sim.MapHash(m.ID)
		if !ok || got != m.StateHash {
			return fmt.Errorf("map %d: state hash %016x, host had %016x", m.ID, got, m.StateHash)
		}
		ids[i], hashes[i] = m.ID, got
	}
	if got := worldHash(sim, ids, hashes); got != h.WorldHash {
		return fmt.Errorf("world state hash %016x, host had %016x", got, h.WorldHash)
	}
	return nil
}

// RawSize is the total decompressed size the header declares, or
// math.MaxUint64 when the blobs' declared sizes add up past it (a header
// from a peer may claim anything).
func (h *Header) RawSize() uint64 {
	n := h.World.RawSize
	for _, m := range h.Maps {
		if n > math.MaxUint64-m.Blob.RawSize {
			return math.MaxUint64
		}
		n += m.Blob.RawSize
	}
	return n
}

// Bytes returns the whole payload in one new slice, for tools and tests;
// senders use Chunk.
func (p *Payload) Bytes() []byte {
	out := make([]byte, 0, p.total)
	for _, s := range p.segs {
		out = append(out, s...)
	}
	return out
}
