package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
)

// recording is how a test session is recorded.
type recording struct {
	maps                    int
	ticks                   uint64
	framesEvery, checkEvery uint64
	// tamper, when set, changes a command as it is written to the file,
	// not as the session applied it.
	tamper func(c *lockstep.Command)
	// pauseAt pauses the session for a few ticks there (0: never).
	pauseAt uint64
}

// record plays a Counters session with commands on most ticks and
// records it as the host does: a start save, then the commands stamped
// and the checkpoints taken. It returns the file's path and the ticks of
// the checkpoints.
func record(t testing.TB, rc recording) (string, []uint64) {
	t.Helper()
	dir := t.TempDir()
	sim := locksteptest.New(rc.maps, 64)
	for range 5 {
		sim.Step()
	}
	auth := lockstep.NewAuthority(sim)
	point, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := snapshot.NewPayload(point, 0, sim.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	save := filepath.Join(dir, "start"+saves.Ext)
	if err := saves.Write(save, saves.Meta{GameName: "test", Tick: sim.Tick()}, body); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "session"+Ext)
	w, err := Create(path, Header{Game: "test", Protocol: 4, TickRate: 60, Segment: 1, Started: 1700000000000, StartTick: sim.Tick()}, save)
	if err != nil {
		t.Fatal(err)
	}
	var pending []lockstep.Command
	var cps []uint64
	var hasher lockstep.Hasher
	var c locksteptest.Counters
	end := sim.Tick() + rc.ticks
	for sim.Tick() < end {
		tick := sim.Tick()
		for i := range tick % 4 {
			auth.Submit(c.AddCommand(int32((tick+i)%uint64(rc.maps)), int8(tick%7)-3))
		}
		if rc.pauseAt != 0 && tick == rc.pauseAt {
			auth.Submit(lockstep.Command{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{0}})
		}
		res := auth.Advance(true)
		if auth.Speed() == 0 && !res.Stepped {
			// Paused: a command still runs, then the game resumes.
			auth.Submit(c.AddCommand(0, 1))
			res2 := auth.Advance(false)
			res.Accepted = append(res.Accepted, res2.Accepted...)
			auth.Submit(lockstep.Command{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{1}})
			res3 := auth.Advance(true)
			res.Accepted = append(res.Accepted, res3.Accepted...)
		}
		for _, cmd := range res.Accepted {
			if rc.tamper != nil {
				rc.tamper(&cmd)
			}
			pending = append(pending, cmd)
		}
		if sim.Tick()%rc.checkEvery == 0 {
			cp := hasher.Take(sim)
			cps = append(cps, cp.Tick)
			if err := w.Checkpoint(cp); err != nil {
				t.Fatal(err)
			}
		}
		if sim.Tick()%rc.framesEvery == 0 {
			if err := w.Commands(pending, sim.Tick(), auth.Speed()); err != nil {
				t.Fatal(err)
			}
			pending = nil
		}
	}
	if err := w.Commands(pending, sim.Tick(), auth.Speed()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(sim.Tick(), EndStopped); err != nil {
		t.Fatal(err)
	}
	return path, cps
}

// loadCounters loads a start save of a Counters world.
func loadCounters(path string) (lockstep.Sim, error) {
	f, err := saves.Read(path)
	if err != nil {
		return nil, err
	}
	return saves.Load(f, locksteptest.Load, nil, 64<<20)
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name string
		rc   recording
	}{
		{"frames and checkpoints apart", recording{maps: 3, ticks: 600, framesEvery: 10, checkEvery: 60}},
		{"frames longer than checkpoints", recording{maps: 2, ticks: 500, framesEvery: 97, checkEvery: 30}},
		{"a pause", recording{maps: 2, ticks: 300, framesEvery: 20, checkEvery: 15, pauseAt: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, cps := record(t, tc.rc)
			res, err := Verify(path, loadCounters, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() || res.Checked != len(cps) {
				t.Fatalf("checked %d of %d checkpoints, failure %q", res.Checked, len(cps), res.Failure)
			}
			if res.Ticks != tc.rc.ticks || !res.Complete || res.LastTick != res.FirstTick+tc.rc.ticks {
				t.Fatalf("simulated %d ticks (want %d), complete %v, ticks %d..%d", res.Ticks, tc.rc.ticks, res.Complete, res.FirstTick, res.LastTick)
			}
			if res.Commands == 0 || len(res.Players) == 0 {
				t.Fatalf("summary: %d commands, players %v", res.Commands, res.Players)
			}
		})
	}
}

// TestVerifyTampered changes one command in the file, not in the session
// that was recorded: the replay fails at the first checkpoint after it,
// and names the last that matched before it.
func TestVerifyTampered(t *testing.T) {
	const at = 203 // the tampered command's tick
	path, cps := record(t, recording{maps: 3, ticks: 600, framesEvery: 10, checkEvery: 60,
		tamper: func(c *lockstep.Command) {
			if c.Tick == at && c.Seq == 0 {
				c.Payload = []byte{c.Payload[0] + 1}
			}
		}})
	res, err := Verify(path, loadCounters, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want, good uint64
	for _, cp := range cps {
		if cp > at {
			want = cp
			break
		}
		good = cp
	}
	if res.OK() || res.FailedTick != want || res.GoodTick != good {
		t.Fatalf("failed at %d (good at %d): %q; want a failure at checkpoint %d after %d", res.FailedTick, res.GoodTick, res.Failure, want, good)
	}
	if !strings.Contains(res.Failure, "map(s)") {
		t.Fatalf("failure %q does not name the maps", res.Failure)
	}
}

// TestTruncatedPrefixes cuts a recording at every length: a prefix
// shorter than its header and start save is not a recording; any longer
// one summarises without error up to its last whole frame, and is
// complete only whole.
func TestTruncatedPrefixes(t *testing.T) {
	path, _ := record(t, recording{maps: 2, ticks: 120, framesEvery: 10, checkEvery: 30})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	minLen := int(r.start.off + r.start.size)
	r.Close()
	full, err := Summarise(path)
	if err != nil || !full.Complete {
		t.Fatalf("whole: %+v, %v", full, err)
	}
	cut := filepath.Join(t.TempDir(), "cut"+Ext)
	lastCommands := 0
	for n := 0; n < len(whole); n++ {
		if err := os.WriteFile(cut, whole[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := Summarise(cut)
		if n < minLen {
			if err == nil {
				t.Fatalf("a prefix of %d bytes (start ends at %d) opened", n, minLen)
			}
			continue
		}
		if err != nil {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
		if in.Complete || in.Cut == "" {
			t.Fatalf("prefix of %d of %d bytes: complete %v, cut %q", n, len(whole), in.Complete, in.Cut)
		}
		if in.Commands < lastCommands || in.Commands > full.Commands {
			t.Fatalf("prefix of %d bytes: %d commands after %d (whole %d)", n, in.Commands, lastCommands, full.Commands)
		}
		lastCommands = in.Commands
	}
	if lastCommands != full.Commands {
		t.Fatalf("the longest cut prefix held %d commands of %d: only the end frame should be missing", lastCommands, full.Commands)
	}
}

// TestDamage flips a byte of each frame after the start, and claims
// frames far larger than the file: each is refused, naming the damage,
// without allocating what the claim says.
func TestDamage(t *testing.T) {
	path, _ := record(t, recording{maps: 2, ticks: 60, framesEvery: 20, checkEvery: 30})
	whole, _ := os.ReadFile(path)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := int(r.start.off + r.start.size)
	r.Close()
	full, err := Summarise(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for off := first; off < len(whole); {
		n := int(uint32(whole[off+1])<<24 | uint32(whole[off+2])<<16 | uint32(whole[off+3])<<8 | uint32(whole[off+4]))
		bad := bytes.Clone(whole)
		bad[off+frameHeaderLen+n/2] ^= 0x10
		p := filepath.Join(dir, "flip"+Ext)
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Summarise(p); !errors.Is(err, ErrDamaged) {
			t.Fatalf("a flipped byte in the %s frame at %d: %v, want ErrDamaged", Kind(whole[off]), off, err)
		}
		huge := bytes.Clone(whole)
		huge[off+1], huge[off+2], huge[off+3], huge[off+4] = 0x00, 0xff, 0xff, 0xff
		if err := os.WriteFile(p, huge, 0o644); err != nil {
			t.Fatal(err)
		}
		// Over its kind's limit, it is damage; within it but past the end
		// of the file, a cut: either way nothing past it is read.
		if in, err := Summarise(p); err == nil && (in.Complete || in.Commands >= full.Commands) {
			t.Fatalf("a %s frame claiming 16 MiB at %d was read: %+v", Kind(whole[off]), off, in)
		}
		off += frameHeaderLen + n
	}
	if _, err := Open(filepath.Join("testdata", "none")); err == nil {
		t.Fatal("opened a missing file")
	}
	notReplay := filepath.Join(dir, "not"+Ext)
	_ = os.WriteFile(notReplay, []byte("LOCKSAVE and more"), 0o644)
	if _, err := Open(notReplay); !errors.Is(err, ErrNotReplay) {
		t.Fatalf("a save opened as a recording: %v", err)
	}
}

// TestWriterRefusesBackwards: commands must come in tick order.
func TestWriterRefusesBackwards(t *testing.T) {
	path, _ := record(t, recording{maps: 1, ticks: 10, framesEvery: 5, checkEvery: 5})
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	save := filepath.Join(t.TempDir(), "s"+saves.Ext)
	if err := r.ExtractStart(save); err != nil {
		t.Fatal(err)
	}
	w, err := Create(filepath.Join(t.TempDir(), "x"+Ext), Header{StartTick: 50}, save)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Commands(nil, 40, 1); err == nil {
		t.Fatal("commands up to tick 40 after a start at 50 were written")
	}
	for {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
}
