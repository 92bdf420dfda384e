package host_test

import (
	"context"
	"errors"
	"image"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
)

// startColony hosts a colony world of maps 200 by 100 cells, the last of
// them idle (it never changes).
func startColony(t *testing.T, cfg host.Config) *hosttest.Host {
	t.Helper()
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Maps: 2, Width: 200, Height: 100, Seed: 3, PawnsPerMap: 10, ThingsPerMap: 300, IdleMaps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Databases: set.Summary()}, world)
}

// colors counts the distinct colors of img, up to 100.
func colors(img *image.RGBA) int {
	seen := map[[4]uint8]bool{}
	for i := 0; i+4 <= len(img.Pix) && len(seen) < 100; i += 4 {
		seen[[4]uint8(img.Pix[i:i+4])] = true
	}
	return len(seen)
}

// TestPaintMap draws a colony map from the host's own state: the picture
// has the map's aspect and is not blank, an idle map is not drawn again
// while its version stands, and unknown maps and sizes are refused.
func TestPaintMap(t *testing.T) {
	h := startColony(t, host.Config{})
	ctx := context.Background()
	pic, err := h.Server.PaintMap(ctx, 0, 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := pic.Image.Bounds().Size(); got != image.Pt(128, 64) || pic.Width != 200 || pic.Height != 100 {
		t.Fatalf("map 0 of 200x100 cells drawn at %v (map %dx%d), want 128x64", got, pic.Width, pic.Height)
	}
	if n := colors(pic.Image); n < 3 {
		t.Errorf("the picture has %d colors: blank", n)
	}
	// Never more than a pixel per cell.
	if big, err := h.Server.PaintMap(ctx, 0, host.MaxPictureSide, nil); err != nil || big.Image.Bounds().Size() != image.Pt(200, 100) {
		t.Errorf("a 1024-pixel picture of a 200x100 map: %v, %v", big.Image, err)
	}

	idle, err := h.Server.PaintMap(ctx, 1, 128, nil)
	if err != nil || !idle.Versioned {
		t.Fatalf("idle map: %+v, %v", idle, err)
	}
	again, err := h.Server.PaintMap(ctx, 1, 128, &idle)
	if err != nil {
		t.Fatal(err)
	}
	if again.Image != nil || again.Version != idle.Version {
		t.Errorf("the idle map was drawn again at the same version %d (now %d)", idle.Version, again.Version)
	}
	if other, err := h.Server.PaintMap(ctx, 1, 64, &idle); err != nil || other.Image == nil {
		t.Errorf("a picture of another size was not drawn: %v", err)
	}

	if _, err := h.Server.PaintMap(ctx, 7, 128, nil); !errors.Is(err, host.ErrUnknownMap) {
		t.Errorf("map 7: %v, want ErrUnknownMap", err)
	}
	for _, side := range []int{0, host.MaxPictureSide + 1} {
		if _, err := h.Server.PaintMap(ctx, 0, side, nil); err == nil {
			t.Errorf("a picture of %d pixels was drawn", side)
		}
	}
	o := h.Server.Overview()
	if !o.MapPictures || len(o.Maps) != 2 || o.Maps[0].Width != 200 || o.Maps[0].Height != 100 {
		t.Errorf("overview: pictures %v, maps %+v", o.MapPictures, o.Maps)
	}
}

// TestPaintMapNone: a game that does not draw and a relay host have no
// pictures, and the overview says why.
func TestPaintMapNone(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		h         func(t *testing.T) *hosttest.Host
	}{
		{"game without pictures", "the game does not draw its maps", func(t *testing.T) *hosttest.Host {
			return hosttest.Start(t, host.Config{}, host.Content{GameVersion: "1"}, locksteptest.New(2, 64))
		}},
		{"relay host", "a relay host runs no world of its own to draw", func(t *testing.T) *hosttest.Host {
			return hosttest.StartRelay(t, host.Config{}, host.Content{GameVersion: "1"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h(t)
			if _, err := h.Server.PaintMap(context.Background(), 0, 64, nil); !errors.Is(err, host.ErrNoPictures) {
				t.Errorf("PaintMap: %v, want ErrNoPictures", err)
			}
			waitOverview(t, h.Server)
			if o := h.Server.Overview(); o.MapPictures || o.NoMapPictures != tc.why {
				t.Errorf("overview: pictures %v, why %q; want %q", o.MapPictures, o.NoMapPictures, tc.why)
			}
		})
	}
}

// waitOverview waits for the session's first published Overview.
func waitOverview(t *testing.T, srv *host.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Overview().At.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no overview published in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSamples: the session keeps a bounded ring of samples, oldest
// first, with the players online, their latency, the tick rate and the
// bytes sent between samples.
func TestSamples(t *testing.T) {
	const keep = 4
	h := hosttest.Start(t, host.Config{Samples: host.SampleConfig{Every: 20 * time.Millisecond, Keep: keep}},
		host.Content{GameVersion: "1"}, locksteptest.New(2, 64))
	hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Alice", Loader: locksteptest.Load})
	// Wait for samples taken with Alice online and her latency measured,
	// and for the ring to wrap: keep samples, all with her.
	deadline := time.Now().Add(20 * time.Second)
	var got []host.Sample
	for {
		got = h.Server.Samples()
		if len(got) == keep && len(got[0].Players) == 1 && got[0].Players[0].Latency > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("samples never showed Alice in all %d: %+v", keep, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var sent uint64
	for i, s := range got {
		if i > 0 && (!s.At.After(got[i-1].At) || s.At.Sub(got[i-1].At) < 20*time.Millisecond || s.Tick < got[i-1].Tick) {
			t.Errorf("sample %d at %v tick %d after %v tick %d: not in order, or closer than the interval", i, s.At, s.Tick, got[i-1].At, got[i-1].Tick)
		}
		if p := s.Players[0]; p.Name != "Alice" || p.ID == 0 {
			t.Errorf("sample %d: player %+v", i, p)
		}
		if s.BytesSent < sent {
			t.Errorf("sample %d: bytes sent went down from %d to %d", i, sent, s.BytesSent)
		}
		sent = s.BytesSent
	}
	last := got[keep-1]
	if last.TicksPerSecond <= 0 || last.BytesPerSecond <= 0 {
		t.Errorf("last sample: %v ticks/s, %v bytes/s with a player online", last.TicksPerSecond, last.BytesPerSecond)
	}
}
