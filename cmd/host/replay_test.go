package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/replay"
)

// TestRecordAndReplay records a session of the real host in which a bot
// plays (host serve --record), then checks it with the real tools:
// `host replay info` summarises it, `host replay verify` replays it
// through every checkpoint and exits 0, and a copy with one spawn taken
// out fails (exit 1) at the first checkpoint after that spawn's tick.
func TestRecordAndReplay(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	joinBin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/join")
	data := filepath.Join(dir, "data")
	h := runHost(t, bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--maps", "2", "--map-size", "64",
		"--conn-rate", "-1", "--tick-rate", "120", "--hash-every", "30", "--record")
	h.waitLog(t, "msg=hosting addr=")
	bot := startJoin(t, joinBin, hostingAddr(t, h.log), "Bot", "--bot", "40")
	var seg string
	h.waitFor(t, "a recording with 40 spawns and 4 checkpoints", func() bool {
		segs, _ := filepath.Glob(filepath.Join(data, replayDirName, "*"+replay.Ext))
		if len(segs) != 1 {
			return false
		}
		seg = segs[0]
		in, err := replay.Summarise(seg)
		return err == nil && in.Checkpoints >= 4 && spawns(t, seg) >= 40
	})
	bot.leave(t)
	if code := h.stop(t); code != 0 {
		t.Fatalf("host exited %d:\n%s", code, h.log)
	}

	code, out := runTool(t, bin, "replay", "info", seg)
	if code != 0 || !strings.Contains(out, "complete: the session stopped here") || !strings.Contains(out, "from 1 players") {
		t.Fatalf("replay info: exit %d:\n%s", code, out)
	}
	code, out = runTool(t, bin, "replay", "verify", seg)
	if code != 0 || !regexp.MustCompile(`: ok, \d+ checkpoints match over \d+ ticks`).MatchString(out) {
		t.Fatalf("replay verify: exit %d:\n%s", code, out)
	}
	t.Logf("replay info and verify:\n%s", out)

	tampered, dropped, cps := dropASpawn(t, seg)
	want := cps[slices.IndexFunc(cps, func(c uint64) bool { return c > dropped })]
	code, out = runTool(t, bin, "replay", "verify", tampered)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("FAILED at tick %d:", want)) {
		t.Fatalf("replay verify of a recording without the spawn at tick %d: exit %d, want 1 naming checkpoint %d:\n%s", dropped, code, want, out)
	}
	t.Logf("tampered (a spawn at tick %d taken out): %s", dropped, out)
}

// frames reads every frame after a segment's start.
func frames(t *testing.T, path string) (*replay.Reader, []replay.Frame) {
	t.Helper()
	r, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var out []replay.Frame
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r, out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fr)
	}
}

// spawns counts the spawn commands a segment holds.
func spawns(t *testing.T, path string) int {
	t.Helper()
	_, frs := frames(t, path)
	n := 0
	for _, fr := range frs {
		if fr.Commands != nil {
			for _, c := range fr.Commands.Commands {
				if c.Kind == colony.CmdSpawnThing {
					n++
				}
			}
		}
	}
	return n
}

// dropASpawn copies a segment without one spawn from its middle, which
// the session applied: the copy's replay departs from the host's
// checkpoints after that tick. It returns the copy, the spawn's tick and
// the checkpoint ticks.
func dropASpawn(t *testing.T, path string) (string, uint64, []uint64) {
	t.Helper()
	r, frs := frames(t, path)
	dir := t.TempDir()
	save := filepath.Join(dir, "start.lhsave")
	if err := r.ExtractStart(save); err != nil {
		t.Fatal(err)
	}
	var cps []uint64
	for _, fr := range frs {
		if fr.Checkpoint != nil {
			cps = append(cps, fr.Checkpoint.Tick)
		}
	}
	slices.Sort(cps)
	out := filepath.Join(dir, "tampered"+replay.Ext)
	w, err := replay.Create(out, r.Header(), save)
	if err != nil {
		t.Fatal(err)
	}
	var dropped uint64
	total := spawns(t, path)
	seen := 0
	for _, fr := range frs {
		switch {
		case fr.Commands != nil:
			var keep []lockstep.Command
			for _, c := range fr.Commands.Commands {
				if c.Kind == colony.CmdSpawnThing {
					seen++
					if seen == total/2 && c.Tick < cps[len(cps)-1] {
						dropped = c.Tick
						continue
					}
				}
				keep = append(keep, c)
			}
			err = w.Commands(keep, fr.Commands.To, fr.Commands.Speed)
		case fr.Checkpoint != nil:
			err = w.Checkpoint(*fr.Checkpoint)
		case fr.Kind == replay.KindEnd:
			err = w.Close(fr.EndTick, fr.EndWhy)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if dropped == 0 {
		t.Fatalf("no spawn to drop before the last checkpoint (%d spawns, checkpoints %v)", total, cps)
	}
	t.Logf("dropped the spawn at tick %d of %s", dropped, strconv.Quote(filepath.Base(path)))
	return out, dropped, cps
}
