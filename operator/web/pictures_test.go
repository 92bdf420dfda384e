package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// colonyHost hosts a colony world of two maps of 200 by 100 cells, the
// second idle, sampled every sampleEvery.
func colonyHost(t *testing.T, sampleEvery time.Duration) (*hosttest.Host, *colony.Content, host.Content) {
	t.Helper()
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Maps: 2, Width: 200, Height: 100, Seed: 5, PawnsPerMap: 12, ThingsPerMap: 300, IdleMaps: 1})
	if err != nil {
		t.Fatal(err)
	}
	hc := host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}
	cfg := host.Config{GameName: "Pictures colony", Samples: host.SampleConfig{Every: sampleEvery, Keep: 360}}
	return hosttest.Start(t, cfg, hc, world), content, hc
}

// countingPainter is a host's PaintMap, counted.
type countingPainter struct {
	*host.Server
	paints atomic.Int32
}

func (c *countingPainter) PaintMap(ctx context.Context, id int32, side int, since *host.MapPicture) (host.MapPicture, error) {
	c.paints.Add(1)
	return c.Server.PaintMap(ctx, id, side, since)
}

// decodePNG decodes a PNG answer and counts its colors (up to 100).
func decodePNG(t *testing.T, body string) (image.Image, int) {
	t.Helper()
	img, err := png.Decode(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the picture is no PNG: %v", err)
	}
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 100; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return img, len(seen)
}

// TestMapPictures: /maps/ID.png is a PNG of the map drawn from the host's
// own world, in the map's aspect and not blank; a second request within
// PictureEvery is the same picture, not a new draw; unknown maps and
// names are 404.
func TestMapPictures(t *testing.T) {
	h, _, _ := colonyHost(t, 0)
	src := &countingPainter{Server: h.Server}
	ts := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet(), PictureSide: 128, PictureEvery: time.Hour}))
	defer ts.Close()

	resp, body := get(t, ts.URL+"/maps/0.png")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("%s %s: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	img, n := decodePNG(t, body)
	if got := img.Bounds().Size(); got != image.Pt(128, 64) {
		t.Errorf("a 200x100 map's picture is %v, want 128x64", got)
	}
	if n < 3 {
		t.Errorf("the picture has %d colors: blank", n)
	}
	etag := resp.Header.Get("ETag")
	resp2, body2 := get(t, ts.URL+"/maps/0.png")
	if resp2.StatusCode != 200 || body2 != body || resp2.Header.Get("ETag") != etag || etag == "" {
		t.Errorf("second request: %s, same bytes %v, ETag %q then %q", resp2.Status, body2 == body, etag, resp2.Header.Get("ETag"))
	}
	if got := src.paints.Load(); got != 1 {
		t.Errorf("two requests within PictureEvery drew the map %d times, want 1", got)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/maps/0.png", nil)
	req.Header.Set("If-None-Match", etag)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match the ETag: %v %v, want 304", resp.Status, err)
	} else {
		resp.Body.Close()
	}

	for _, path := range []string{"/maps/2.png", "/maps/-1.png", "/maps/0.gif", "/maps/x.png", "/maps/99999999999.png"} {
		if resp, body := get(t, ts.URL+path); resp.StatusCode != 404 {
			t.Errorf("%s: %s %q, want 404", path, resp.Status, body)
		}
	}
	var o struct {
		MapPictures bool `json:"map_pictures"`
		Maps        []struct {
			ID            int32
			Width, Height int
		} `json:"maps"`
	}
	_, body = get(t, ts.URL+"/api/overview")
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	if !o.MapPictures || len(o.Maps) != 2 || o.Maps[1].Width != 200 || o.Maps[1].Height != 100 {
		t.Errorf("overview: map_pictures %v, maps %+v", o.MapPictures, o.Maps)
	}
}

// TestMapPicturesRelay: a relay host has no world to draw: no pictures,
// and the overview says why.
func TestMapPicturesRelay(t *testing.T) {
	h := hosttest.StartRelay(t, host.Config{}, host.Content{GameVersion: "1"})
	ts := httptest.NewServer(web.Handler(h.Server, web.Config{Logger: testkit.Quiet()}))
	defer ts.Close()
	if resp, body := get(t, ts.URL+"/maps/0.png"); resp.StatusCode != 404 || !strings.Contains(body, "relay host") {
		t.Errorf("relay host /maps/0.png: %s %q", resp.Status, body)
	}
	var o struct {
		MapPictures   bool   `json:"map_pictures"`
		NoMapPictures string `json:"no_map_pictures"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for o.NoMapPictures == "" && time.Now().Before(deadline) {
		_, body := get(t, ts.URL+"/api/overview")
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if o.MapPictures || !strings.Contains(o.NoMapPictures, "relay host") {
		t.Errorf("relay overview: map_pictures %v, why %q", o.MapPictures, o.NoMapPictures)
	}
}

// sampledSource is a fake Source with samples.
type sampledSource struct {
	fakeSource
	samples []host.Sample
}

func (s *sampledSource) Samples() []host.Sample     { return s.samples }
func (s *sampledSource) SampleEvery() time.Duration { return 5 * time.Second }

// TestSamplesRoute: /api/samples carries every sample, oldest first, with
// its rates and its players' latency; a Source without samples has none.
func TestSamplesRoute(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := &sampledSource{samples: []host.Sample{
		{At: t0, Tick: 100, TicksPerSecond: 59},
		{At: t0.Add(5 * time.Second), Tick: 400, TicksPerSecond: 60, BytesPerSecond: 2048, BytesSent: 10240,
			Players: []host.PlayerSample{{ID: 1, Name: "Alice", Latency: 12500 * time.Microsecond}, {ID: 2, Name: "Bob", Spectator: true}}},
		{At: t0.Add(10 * time.Second), Tick: 700, TicksPerSecond: 60, BytesPerSecond: 4096, BytesSent: 30720,
			Players: []host.PlayerSample{{ID: 1, Name: "Alice", Latency: 20 * time.Millisecond}}},
	}}
	ts := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet()}))
	defer ts.Close()
	resp, body := get(t, ts.URL+"/api/samples")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	var got struct {
		EveryMs float64 `json:"every_ms"`
		Samples []struct {
			At             time.Time `json:"at"`
			Tick           uint64    `json:"tick"`
			TicksPerSecond float64   `json:"ticks_per_second"`
			BytesPerSecond float64   `json:"bytes_per_second"`
			BytesSent      uint64    `json:"bytes_sent"`
			Players        []struct {
				ID        int32   `json:"id"`
				Name      string  `json:"name"`
				Spectator bool    `json:"spectator"`
				LatencyMs float64 `json:"latency_ms"`
			} `json:"players"`
		} `json:"samples"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.EveryMs != 5000 || len(got.Samples) != 3 {
		t.Fatalf("every %v ms, %d samples: %s", got.EveryMs, len(got.Samples), body)
	}
	s1, s2 := got.Samples[1], got.Samples[2]
	if !got.Samples[0].At.Equal(t0) || got.Samples[0].Players == nil || s1.Tick != 400 || s1.BytesPerSecond != 2048 || s2.BytesSent != 30720 || s2.TicksPerSecond != 60 {
		t.Errorf("samples: %s", body)
	}
	if len(s1.Players) != 2 || s1.Players[0].Name != "Alice" || s1.Players[0].LatencyMs != 12.5 || !s1.Players[1].Spectator || s2.Players[0].LatencyMs != 20 {
		t.Errorf("players: %+v then %+v", s1.Players, s2.Players)
	}

	plain := httptest.NewServer(web.Handler(&fakeSource{}, web.Config{Logger: testkit.Quiet()}))
	defer plain.Close()
	for _, path := range []string{"/api/samples", "/maps/0.png"} {
		if resp, _ := get(t, plain.URL+path); resp.StatusCode != 404 {
			t.Errorf("%s of a Source that neither samples nor draws: %s, want 404", path, resp.Status)
		}
	}
}

// drawingSource is a fake Source that samples and draws a fixed picture.
type drawingSource struct {
	sampledSource
}

func (d *drawingSource) PaintMap(_ context.Context, id int32, side int, _ *host.MapPicture) (host.MapPicture, error) {
	if id != 0 {
		return host.MapPicture{}, host.ErrUnknownMap
	}
	img := image.NewRGBA(image.Rect(0, 0, side, side/2))
	copy(img.Pix, bytes.Repeat([]byte{200, 90, 20, 255}, side*side/2))
	return host.MapPicture{ID: id, Width: 2 * side, Height: side, Image: img}, nil
}
