package resim

import (
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// The answer document: a Reply as the player sends it to the host, in
// Client_ExplainReply chunks (docs/protocol.md section 10.1). Its lengths
// are bounded twice: the whole document by the request's limit, checked
// by the host before it keeps a byte, and each list here, after decoding,
// against the request's window.

// Limits of an answer document beyond the window's.
const (
	// MaxAnswerCommands bounds the applied commands an answer lists.
	MaxAnswerCommands = 131072
	// MaxAnswerTraceMaps bounds the maps of one tick's trace.
	MaxAnswerTraceMaps = lockstep.MaxMaps
)

// answerDoc is the answer document's layout.
type answerDoc struct {
	Hashes   []uint64           `codec:"r"`
	Trace    []traceDoc         `codec:"n"`
	Commands []lockstep.Command `codec:"c"`
	Live     []traceDoc         `codec:"l"`
	DiffTick uint64             `codec:"x"`
	State    []blobDoc          `codec:"s"`
	End      []blobDoc          `codec:"e"`
}

type traceDoc struct {
	Tick      uint64    `codec:"t"`
	Commands  uint64    `codec:"h"`
	NCommands uint32    `codec:"n"`
	World     []byte    `codec:"w"`
	Maps      []blobDoc `codec:"m"`
}

type blobDoc struct {
	ID   int32  `codec:"i"`
	Data []byte `codec:"d"`
}

// RequestFromWire is the Request the host's Server_ExplainRequest makes:
// its window, maps and hashes (flat, tick by tick, the world first).
func RequestFromWire(from, to uint64, maps []int32, flat []uint64) (Request, error) {
	ids := WithWorld(maps)
	if len(ids) != 1+len(maps) {
		return Request{}, errors.New("explain: the request names the world or a map twice")
	}
	if to <= from || uint64(len(flat)) != (to-from)*uint64(len(ids)) {
		return Request{}, fmt.Errorf("explain: %d hashes for window %d..%d", len(flat), from, to)
	}
	run := &Run{From: from, To: to, IDs: ids}
	for k := 0; k < len(flat); k += len(ids) {
		run.Hashes = append(run.Hashes, flat[k:k+len(ids)])
	}
	return Request{From: from, To: to, Maps: maps, Host: run}, nil
}

// FlatHashes is a run's hashes as Server_ExplainRequest carries them.
func FlatHashes(r *Run) []uint64 {
	out := make([]uint64, 0, len(r.Hashes)*len(r.IDs))
	for _, h := range r.Hashes {
		out = append(out, h...)
	}
	return out
}

// EncodeReply is the answer document of rep.
func EncodeReply(rep *Reply) ([]byte, error) {
	d := answerDoc{Commands: rep.Commands, DiffTick: rep.DiffTick, State: blobs(rep.State), End: blobs(rep.End)}
	if rep.Run != nil {
		d.Hashes = FlatHashes(rep.Run)
		d.Trace = traces(rep.Run.Trace)
	}
	d.Live = traces(rep.Live)
	b, err := codec.Encode(&d)
	if err != nil {
		return nil, fmt.Errorf("explain: encode the answer: %w", err)
	}
	return b, nil
}

// DecodeReply reads an answer document to req (whose Host run gives the
// window and the IDs), checking every list against the window: the
// player's hashes cover its ticks, its traces and commands fall in it,
// and its states are of the IDs asked about. The Reply's Run has req's
// window and IDs.
func DecodeReply(b []byte, req Request) (*Reply, error) {
	var d answerDoc
	if err := codec.Decode(b, &d); err != nil {
		return nil, fmt.Errorf("explain: the answer: %w", err)
	}
	h := req.Host
	if h == nil {
		return nil, errors.New("explain: no request to read the answer against")
	}
	n := h.To - h.From
	ids := h.IDs
	switch {
	case uint64(len(d.Hashes)) != n*uint64(len(ids)):
		return nil, fmt.Errorf("explain: the answer has %d hashes for %d ticks of %d IDs", len(d.Hashes), n, len(ids))
	case uint64(len(d.Trace)) > n || uint64(len(d.Live)) > n:
		return nil, fmt.Errorf("explain: the answer has more traces than the window's %d ticks", n)
	case len(d.Commands) > MaxAnswerCommands:
		return nil, fmt.Errorf("explain: the answer lists %d commands, more than %d", len(d.Commands), MaxAnswerCommands)
	case len(d.State) > len(ids) || len(d.End) > len(ids):
		return nil, errors.New("explain: the answer has more states than IDs asked about")
	}
	for _, c := range d.Commands {
		if c.Tick < h.From || c.Tick >= h.To {
			return nil, fmt.Errorf("explain: the answer has a command of tick %d, outside %d..%d", c.Tick, h.From, h.To)
		}
	}
	if len(d.State) > 0 && (d.DiffTick < h.From || d.DiffTick >= h.To) {
		return nil, fmt.Errorf("explain: the answer's differing tick %d is outside %d..%d", d.DiffTick, h.From, h.To)
	}
	run := &Run{From: h.From, To: h.To, IDs: ids}
	for k := 0; k < len(d.Hashes); k += len(ids) {
		run.Hashes = append(run.Hashes, d.Hashes[k:k+len(ids)])
	}
	var err error
	if run.Trace, err = fromTraces(d.Trace, h); err != nil {
		return nil, err
	}
	rep := &Reply{Run: run, Commands: d.Commands, DiffTick: d.DiffTick}
	if rep.Live, err = fromTraces(d.Live, h); err != nil {
		return nil, err
	}
	if rep.State, err = fromBlobs(d.State, ids); err != nil {
		return nil, err
	}
	if rep.End, err = fromBlobs(d.End, ids); err != nil {
		return nil, err
	}
	return rep, nil
}

func blobs(m map[int32][]byte) []blobDoc {
	if m == nil {
		return nil
	}
	out := make([]blobDoc, 0, len(m))
	for _, id := range WithWorld(keys(m)) {
		if b, ok := m[id]; ok {
			out = append(out, blobDoc{ID: id, Data: b})
		}
	}
	return out
}

// keys is m's IDs, in increasing order.
func keys(m map[int32][]byte) []int32 {
	out := make([]int32, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	for i := 1; i < len(out); i++ { // a handful: insertion sort
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func fromBlobs(bs []blobDoc, ids []int32) (map[int32][]byte, error) {
	if bs == nil {
		return nil, nil
	}
	out := make(map[int32][]byte, len(bs))
	for _, b := range bs {
		if !containsID(ids, b.ID) {
			return nil, fmt.Errorf("explain: the answer has a state of map %d, which was not asked about", b.ID)
		}
		if _, dup := out[b.ID]; dup {
			return nil, fmt.Errorf("explain: the answer has map %d's state twice", b.ID)
		}
		out[b.ID] = b.Data
	}
	return out, nil
}

func traces(ts []lockstep.TickTrace) []traceDoc {
	out := make([]traceDoc, len(ts))
	for i, t := range ts {
		out[i] = traceDoc{Tick: t.Tick, Commands: t.Commands, NCommands: uint32(t.NCommands), World: t.World}
		for _, m := range t.Maps {
			out[i].Maps = append(out[i].Maps, blobDoc{ID: m.ID, Data: m.Data})
		}
	}
	return out
}

func fromTraces(ds []traceDoc, h *Run) ([]lockstep.TickTrace, error) {
	out := make([]lockstep.TickTrace, len(ds))
	for i, d := range ds {
		if d.Tick < h.From || d.Tick >= h.To || (i > 0 && d.Tick <= ds[i-1].Tick) {
			return nil, fmt.Errorf("explain: the answer's trace of tick %d is outside %d..%d or out of order", d.Tick, h.From, h.To)
		}
		if len(d.Maps) > MaxAnswerTraceMaps || d.NCommands > MaxAnswerCommands {
			return nil, fmt.Errorf("explain: the answer's trace of tick %d is too large", d.Tick)
		}
		out[i] = lockstep.TickTrace{Tick: d.Tick, Commands: d.Commands, NCommands: int(d.NCommands), World: d.World}
		for _, m := range d.Maps {
			out[i].Maps = append(out[i].Maps, lockstep.MapTrace{ID: m.ID, Data: m.Data})
		}
	}
	return out, nil
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
