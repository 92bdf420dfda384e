package corpus

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/wire"
)

// Size limits of the seeds made from a recording.
const (
	// MaxSeedBytes caps one byte argument cut from a stream.
	MaxSeedBytes = 64 << 10
	// liveWindow caps a seed of the frames after a client's world download.
	liveWindow = 16 << 10
	// maxOps caps a FuzzReceiver seed.
	maxOps = 1024
	// perID is how many bodies of each packet ID FuzzDecode gets.
	perID = 3
	// maxCommands caps the FuzzApply seeds.
	maxCommands = 8
)

// Analysis is a recording split into what the seeds are made of.
type Analysis struct {
	rec *Recording
	// client and host are the frames of each connection, by direction.
	client, host [][]Frame
	// Transfers are the world payloads the host sent, in order.
	Transfers []Transfer
	// Commands are the commands clients sent, in order.
	Commands []lockstep.Command
	// IDs are the packet IDs seen on the wire, ascending.
	IDs []wire.ID
	// join is the first join payload, parsed, and its blobs inflated.
	join rawWorld
	// saved is the save's world, inflated.
	saved rawWorld
	// repairs are the maps repair payloads carried, inflated.
	repairs []lockstep.MapBlob
	// details are the def manifests the host sent refused clients.
	details [][]byte
	// reports are the status replies, decoded.
	reports []status.Info
}

// rawWorld is a world's decompressed state.
type rawWorld struct {
	world []byte
	maps  []lockstep.MapBlob
}

// Analyze splits a recording into frames, payloads, commands and blobs.
func Analyze(rec *Recording) (*Analysis, error) {
	a := &Analysis{rec: rec}
	seen := map[wire.ID]bool{}
	for i, c := range rec.Conns {
		cf, hf := Frames(c.FromClient), Frames(c.FromHost)
		a.client, a.host = append(a.client, cf), append(a.host, hf)
		for _, f := range slices.Concat(cf, hf) {
			seen[f.ID] = true
			p, err := wire.Decode(f.ID, f.Body)
			if err != nil {
				return nil, fmt.Errorf("analyze: connection %d: %s: %w", i, f.ID, err)
			}
			switch p := p.(type) {
			case *wire.ClientCommand:
				a.Commands = append(a.Commands, lockstep.Command{MapID: p.MapID, Kind: p.Kind, Payload: p.Payload})
			case *wire.ServerDisconnect:
				if len(p.Detail) > 0 {
					m, err := inflate(p.Detail)
					if err != nil {
						return nil, fmt.Errorf("analyze: disconnect detail: %w", err)
					}
					a.details = append(a.details, m)
				}
			}
		}
		ts, err := Transfers(hf)
		if err != nil {
			return nil, fmt.Errorf("analyze: connection %d: %w", i, err)
		}
		a.Transfers = append(a.Transfers, ts...)
	}
	for id := range seen {
		a.IDs = append(a.IDs, id)
	}
	slices.Sort(a.IDs)
	for _, t := range a.Transfers {
		p, err := snapshot.Parse(t.Payload)
		if err != nil {
			return nil, fmt.Errorf("analyze: recorded payload: %w", err)
		}
		raw, err := inflateWorld(p)
		if err != nil {
			return nil, err
		}
		if t.Repair {
			a.repairs = append(a.repairs, raw.maps...)
		} else if a.join.world == nil {
			a.join = raw
		}
	}
	if a.join.world == nil {
		return nil, errors.New("analyze: no join payload was recorded")
	}
	body, err := readSaveBody(rec.Save)
	if err != nil {
		return nil, err
	}
	if a.saved, err = inflateWorld(body); err != nil {
		return nil, err
	}
	for _, r := range rec.StatusReplies {
		_, info, err := status.DecodeReply(r)
		if err != nil {
			return nil, fmt.Errorf("analyze: status reply: %w", err)
		}
		a.reports = append(a.reports, info)
	}
	return a, nil
}

// inflate decompresses a gzip stream.
func inflate(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, 64<<20))
}

// inflateWorld decompresses the world and maps of a payload.
func inflateWorld(p *snapshot.Parsed) (rawWorld, error) {
	var r rawWorld
	var err error
	if r.world, err = p.Inflate(0, 0); err != nil {
		return r, fmt.Errorf("analyze: %w", err)
	}
	for i := range p.Maps {
		data, err := p.Inflate(1+i, 0)
		if err != nil {
			return r, fmt.Errorf("analyze: %w", err)
		}
		r.maps = append(r.maps, lockstep.MapBlob{ID: p.Header.Maps[i].ID, Data: data})
	}
	return r, nil
}

// readSaveBody reads a save from its bytes, with its blobs.
func readSaveBody(b []byte) (*snapshot.Parsed, error) {
	var (
		body    *snapshot.Parsed
		readErr error
	)
	err := withFile(b, func(p string) error {
		f, err := saves.Read(p)
		if err != nil {
			readErr = err
			return nil
		}
		body, readErr = f.ReadBody()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read save: %w", err)
	}
	if readErr != nil {
		return nil, fmt.Errorf("analyze: %w", readErr)
	}
	return body, nil
}

// readSave reads a save from its bytes.
func readSave(b []byte) (*saves.File, error) {
	var (
		f       *saves.File
		readErr error
	)
	err := withFile(b, func(p string) error {
		f, readErr = saves.Read(p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read save: %w", err)
	}
	return f, readErr
}

// prefix is the part of stream from start that holds whole frames and
// fits in limit bytes, or the first limit bytes if the first frame does
// not fit.
func prefix(stream []byte, frames []Frame, start, limit int) []byte {
	end := start
	for _, f := range frames {
		if f.End <= start {
			continue
		}
		if f.End-start > limit {
			break
		}
		end = f.End
	}
	if end == start {
		end = min(len(stream), start+limit)
	}
	return stream[start:end]
}

// frameReaderSeeds are, for each direction of each connection, its
// opening bytes and, after a client's world download, the live session.
func (a *Analysis) frameReaderSeeds() [][]any {
	var out [][]any
	for i, c := range a.rec.Conns {
		out = append(out, []any{prefix(c.FromClient, a.client[i], 0, MaxSeedBytes)})
		out = append(out, []any{prefix(c.FromHost, a.host[i], 0, MaxSeedBytes)})
		if j := slices.IndexFunc(a.client[i], func(f Frame) bool { return f.ID == wire.IDClientWorldReady }); j >= 0 {
			out = append(out, []any{prefix(c.FromClient, a.client[i], a.client[i][j].End, liveWindow)})
		}
		// The live part of the host's stream starts after the last chunk
		// of the join download.
		last := -1
		for j, f := range a.host[i] {
			if f.ID == wire.IDServerResync {
				break
			}
			if f.ID == wire.IDServerWorldData {
				last = j
			}
		}
		if last >= 0 && last+1 < len(a.host[i]) {
			out = append(out, []any{prefix(c.FromHost, a.host[i], a.host[i][last].End, liveWindow)})
		}
	}
	return out
}

// decodeSeeds are, for each packet ID seen, the two smallest distinct
// bodies and the largest within MaxSeedBytes.
func (a *Analysis) decodeSeeds() [][]any {
	bodies := map[wire.ID][][]byte{}
	for _, fs := range slices.Concat(a.client, a.host) {
		for _, f := range fs {
			if len(f.Body) <= MaxSeedBytes {
				bodies[f.ID] = append(bodies[f.ID], f.Body)
			}
		}
	}
	var out [][]any
	for _, id := range a.IDs {
		bs := bodies[id]
		slices.SortFunc(bs, func(x, y []byte) int {
			return cmp.Or(cmp.Compare(len(x), len(y)), bytes.Compare(x, y))
		})
		bs = slices.CompactFunc(bs, bytes.Equal)
		if len(bs) > perID {
			bs = append(bs[:perID-1], bs[len(bs)-1])
		}
		for _, b := range bs {
			out = append(out, []any{byte(id), b})
		}
	}
	return out
}

// parseSeeds are the first join payload and every repair payload.
func (a *Analysis) parseSeeds() [][]any {
	var out [][]any
	joined := false
	for _, t := range a.Transfers {
		if t.Repair || !joined {
			out = append(out, []any{t.Payload})
			joined = joined || !t.Repair
		}
	}
	return out
}

// receiverSeeds replay the chunking of the same payloads as FuzzReceiver's
// operations: each chunk in pieces of at most 256 bytes, uncorrupted.
func (a *Analysis) receiverSeeds() [][]any {
	var out [][]any
	joined := false
	for _, t := range a.Transfers {
		if !t.Repair && joined {
			continue
		}
		joined = joined || !t.Repair
		var ops []byte
		for _, n := range t.Chunks {
			for ; n > 0 && len(ops) < maxOps; n -= 256 {
				ops = append(ops, 0, byte(min(n, 256)-1))
			}
		}
		out = append(out, []any{ops})
	}
	return out
}

// loadSeeds are the world and both maps of the join payload and of the
// save (the same blobs while the host saves its current join point).
func (a *Analysis) loadSeeds() [][]any {
	var out [][]any
	for _, w := range []rawWorld{a.join, a.saved} {
		if len(w.maps) == 2 && w.maps[0].ID == 0 && w.maps[1].ID == 1 {
			out = append(out, []any{w.world, w.maps[0].Data, w.maps[1].Data})
		}
	}
	return out
}

// replaceMapSeeds are the maps of the join payload and those a repair sent.
func (a *Analysis) replaceMapSeeds() [][]any {
	var out [][]any
	for _, m := range slices.Concat(a.join.maps, a.repairs) {
		out = append(out, []any{m.ID, m.Data})
	}
	return out
}

// applySeeds are commands clients sent: the first of each kind, then
// others in order, up to maxCommands.
func (a *Analysis) applySeeds() [][]any {
	var picked []lockstep.Command
	kinds := map[uint16]bool{}
	for _, c := range a.Commands {
		if !kinds[c.Kind] {
			kinds[c.Kind] = true
			picked = append(picked, c)
		}
	}
	for _, c := range a.Commands {
		if len(picked) >= maxCommands {
			break
		}
		if !slices.ContainsFunc(picked, func(p lockstep.Command) bool {
			return p.Kind == c.Kind && p.MapID == c.MapID && bytes.Equal(p.Payload, c.Payload)
		}) {
			picked = append(picked, c)
		}
	}
	out := make([][]any, len(picked))
	for i, c := range picked {
		out[i] = []any{c.Kind, c.MapID, c.Payload}
	}
	return out
}

// requestSeeds pair each status request with the game the host reported.
func (a *Analysis) requestSeeds() [][]any {
	var out [][]any
	for i, r := range a.rec.StatusRequests {
		info := a.reports[min(i, len(a.reports)-1)]
		out = append(out, []any{r, info.GameName, info.GameVersion, info.Players})
	}
	return out
}

// single wraps each byte slice as a one-argument seed.
func single(bs ...[]byte) [][]any {
	out := make([][]any, len(bs))
	for i, b := range bs {
		out[i] = []any{b}
	}
	return out
}

// replaySeeds are the commands the host stamped, as one connection
// received them (the one that received the most), laid out as a
// held-world rejoin's replay: all of them, and the first of each kind.
func (a *Analysis) replaySeeds() [][]any {
	var most []lockstep.Command
	for _, fs := range a.host {
		var cmds []lockstep.Command
		for _, f := range fs {
			if f.ID != wire.IDServerTick {
				continue
			}
			if p, err := wire.Decode(f.ID, f.Body); err == nil {
				cmds = append(cmds, p.(*wire.ServerTick).Commands...)
			}
		}
		if len(cmds) > len(most) {
			most = cmds
		}
	}
	var firsts []lockstep.Command
	for _, c := range most {
		if !slices.ContainsFunc(firsts, func(p lockstep.Command) bool { return p.Kind == c.Kind }) {
			firsts = append(firsts, c)
		}
	}
	var out [][]any
	for _, cmds := range [][]lockstep.Command{most, firsts} {
		if raw, err := wire.AppendReplay(nil, cmds, 1); err == nil && len(raw) <= MaxSeedBytes {
			out = append(out, []any{raw})
		}
	}
	return out
}
