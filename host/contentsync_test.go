package host_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/wire"
)

// sharedMod writes a mod with a def file, a texture of size random bytes
// and an assembly, and returns the handler that shares it and the
// texture's bytes.
func sharedMod(t *testing.T, size int) (*modsync.Handler, []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Mod")
	tex := make([]byte, size)
	rand.Read(tex)
	files := map[string][]byte{
		"About/About.xml":       []byte(`<ModMetaData><packageId>test.shared</packageId><name>Shared</name></ModMetaData>`),
		"Defs/Things.xml":       bytes.Repeat([]byte(`<Defs><ThingDef><defName>A</defName></ThingDef></Defs>`+"\n"), 1),
		"Textures/Big.png":      tex,
		"Assemblies/Shared.dll": []byte("MZ\x90\x00code"),
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := defs.ScanDirs([]string{dir}, defs.Options{GameVersion: defs.DefaultGameVersion})
	if err != nil {
		t.Fatal(err)
	}
	m, err := modsync.Build(set, modsync.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := modsync.NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	return h, tex
}

// startSharing hosts a session that shares share.
func startSharing(t *testing.T, cfg host.Config, share *modsync.Handler) *hosttest.Host {
	t.Helper()
	return hosttest.Start(t, cfg, host.Content{GameVersion: "1.6", Mods: []string{"test.shared"}, Databases: testDefs, Share: share}, locksteptest.New(1, 8))
}

// offered sends Client_Protocol and returns the host's Server_ModList.
func (c *rawClient) offered() *wire.ServerModList {
	c.t.Helper()
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion, Codecs: []uint8{uint8(snapshot.Zstd), uint8(snapshot.Gzip)}})
	return c.expect(wire.IDServerModList).(*wire.ServerModList)
}

// content asks for hash from offset and returns the bytes of the
// answer's chunks, inflated, and their number.
func (c *rawClient) content(hash []byte, offset uint64) ([]byte, int) {
	c.t.Helper()
	c.send(&wire.ClientContentGet{Hash: hash, Offset: offset})
	var out []byte
	for n := 1; ; n++ {
		sc := c.expect(wire.IDServerContent).(*wire.ServerContent)
		if !bytes.Equal(sc.Hash, hash) || sc.Offset != offset+uint64(len(out)) {
			c.t.Fatalf("chunk %d: %x at %d, want %x at %d", n, sc.Hash, sc.Offset, hash, offset+uint64(len(out)))
		}
		data := sc.Data
		if sc.Coding != wire.ContentStored {
			var err error
			if data, err = snapshot.Inflate(snapshot.Codec(sc.Coding-1), sc.Data, int64(sc.Length)); err != nil {
				c.t.Fatal(err)
			}
		}
		out = append(out, data...)
		if sc.Offset+uint64(sc.Length) == sc.Total {
			return out, n
		}
	}
}

// TestContentOverSession: the host offers its manifest in
// Server_ModList, answers requests for it and for a file from an offset
// before Client_Defs, and the handshake then goes on on the same
// connection.
func TestContentOverSession(t *testing.T) {
	share, tex := sharedMod(t, 600<<10)
	h := startSharing(t, host.Config{}, share)
	c := dialRaw(t, h.Addr)
	ml := c.offered()
	if sum := share.ManifestHash(); !bytes.Equal(ml.ContentHash, sum[:]) || int(ml.ContentSize) != len(share.Manifest()) {
		t.Fatalf("offer %x %d, want %x %d", ml.ContentHash, ml.ContentSize, sum, len(share.Manifest()))
	}
	if got, _ := c.content(nil, 0); !bytes.Equal(got, share.Manifest()) {
		t.Fatal("the manifest sent is not the one offered")
	}
	sum := sha256.Sum256(tex)
	got, chunks := c.content(sum[:], 1000)
	if !bytes.Equal(got, tex[1000:]) {
		t.Fatalf("the texture from byte 1000: %d bytes, not the file's", len(got))
	}
	if chunks < 3 {
		t.Errorf("%d chunks for %d bytes", chunks, len(got))
	}
	if got, _ := c.content(sum[:], uint64(len(tex))); len(got) != 0 {
		t.Errorf("from the end: %d bytes", len(got))
	}
	dbs := make([]wire.DefSummary, len(testDefs))
	for i, d := range testDefs {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	c.send(&wire.ClientDefs{Databases: dbs})
	c.syncClockUntil(wire.IDServerDefsOK)
}

// TestContentRefusals: what the host does not publish, a request to a
// host that shares nothing, an offset past a file and a joiner asking
// more than twice what is shared end the connection.
func TestContentRefusals(t *testing.T) {
	share, tex := sharedMod(t, 100<<10)
	sharing := startSharing(t, host.Config{}, share)
	plain := startSharing(t, host.Config{}, nil)
	texSum := sha256.Sum256(tex)
	dllSum := sha256.Sum256([]byte("MZ\x90\x00code"))
	tests := []struct {
		name   string
		addr   string
		before int // whole texture fetches first
		get    *wire.ClientContentGet
		reason wire.Reason
	}{
		{"no offer", plain.Addr, 0, &wire.ClientContentGet{}, wire.ReasonBadPacket},
		{"assembly", sharing.Addr, 0, &wire.ClientContentGet{Hash: dllSum[:]}, wire.ReasonBadPacket},
		{"unknown hash", sharing.Addr, 0, &wire.ClientContentGet{Hash: bytes.Repeat([]byte{1}, 32)}, wire.ReasonBadPacket},
		{"past the end", sharing.Addr, 0, &wire.ClientContentGet{Hash: texSum[:], Offset: uint64(len(tex)) + 1}, wire.ReasonBadPacket},
		{"third time", sharing.Addr, 2, &wire.ClientContentGet{Hash: texSum[:]}, wire.ReasonGeneric},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, tc.addr)
			if ml := c.offered(); (tc.addr == plain.Addr) != (len(ml.ContentHash) == 0) {
				t.Fatalf("offer %x", ml.ContentHash)
			}
			for range tc.before {
				c.content(texSum[:], 0)
			}
			c.send(tc.get)
			if d := c.disconnected(); d.Reason != tc.reason {
				t.Errorf("disconnect %s (%s), want %s", d.Reason, d.Message, tc.reason)
			}
		})
	}
}

// TestContentSharesUploadPacing: content over the session connection is
// drawn from the upload cap and holds an upload slot while it goes, so
// content over HTTP finds none free (503); once it is done, HTTP is
// served, paced too.
func TestContentSharesUploadPacing(t *testing.T) {
	const rate = 256 << 10
	share, tex := sharedMod(t, 768<<10)
	var cfg host.Config
	cfg.Join.MaxUploadRate, cfg.Join.MaxUploadSlots = rate, 1
	h := startSharing(t, cfg, share)
	web := httptest.NewServer(h.Server.ContentHandler())
	defer web.Close()
	sum := sha256.Sum256(tex)
	url := modsync.URL(web.URL, sum)

	c := dialRaw(t, h.Addr)
	c.offered()
	start := time.Now()
	done := make(chan []byte)
	go func() {
		got, _ := c.content(sum[:], 0)
		done <- got
	}()
	time.Sleep(300 * time.Millisecond)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("HTTP while the session's content holds the slot: %s, want 503", resp.Status)
	}
	got := <-done
	took := time.Since(start)
	if !bytes.Equal(got, tex) {
		t.Fatal("the texture differs")
	}
	// The bucket holds 16 KiB at most: the rest goes at the rate.
	if least := time.Duration(float64(len(tex)-32<<10) / rate * float64(time.Second)); took < least {
		t.Errorf("%d bytes over the session in %v, under the cap of %d bytes/s (at least %v)", len(tex), took, rate, least)
	}
	start = time.Now()
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body.Bytes(), tex) {
		t.Fatalf("HTTP after: %s, %d bytes", resp.Status, body.Len())
	}
	if least := time.Duration(float64(len(tex)-32<<10) / rate * float64(time.Second)); time.Since(start) < least {
		t.Errorf("%d bytes over HTTP in %v, under the cap", len(tex), time.Since(start))
	}
	t.Logf("session: %v, HTTP: %v for %d bytes at a cap of %d bytes/s", took, time.Since(start), len(tex), rate)
}
