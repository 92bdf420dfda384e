package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	joinpkg "github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// exportManifest writes the manifest of content with "host defs export"
// and returns its path.
func exportManifest(t *testing.T, dir string, content ...string) string {
	t.Helper()
	path := filepath.Join(dir, "defs.json")
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	if code := cliutil.Run(app, append([]string{"host", "defs", "export", "-o", path}, content...), &errOut, nil); code != 0 {
		t.Fatalf("defs export exited %d:\n%s", code, errOut.String())
	}
	return path
}

// TestRelayDefsManifest: a relay host given the manifest "defs export"
// wrote of real-style content (--defs-manifest) announces what the same
// host given the content folders does, admits joiners with that content,
// and refuses one with other content for Defs with the same message,
// statuses and detail, from which the joiner names the defs that differ.
func TestRelayDefsManifest(t *testing.T) {
	dir := t.TempDir()
	core, mod := writeRealContent(t, dir)
	path := exportManifest(t, dir, core, mod)
	full, err := gamecontent.Load([]string{core, mod}, "")
	if err != nil {
		t.Fatal(err)
	}
	coreOnly, err := gamecontent.Load([]string{core}, "")
	if err != nil {
		t.Fatal(err)
	}
	fromManifest, err := readManifestContent(path, testkit.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	fromContent := hostcontent.Content(full, testkit.Quiet())
	if fromManifest.GameVersion != fromContent.GameVersion || !slices.Equal(fromManifest.Mods, fromContent.Mods) ||
		!slices.Equal(fromManifest.Databases, fromContent.Databases) {
		t.Fatalf("from the manifest: %s %v %d databases; from the content: %s %v %d databases", fromManifest.GameVersion,
			fromManifest.Mods, len(fromManifest.Databases), fromContent.GameVersion, fromContent.Mods, len(fromContent.Databases))
	}

	secret := []byte("correct horse battery")
	joinAs := func(addr, name string, b *gamecontent.Bundle, arbiter bool) error {
		cfg := joinpkg.Config{Addr: addr, Name: name, Databases: b.Summary(), Loader: locksteptest.Load, Logger: testkit.Quiet()}
		if arbiter {
			cfg.ArbiterSecret = secret
			cfg.World = func() (lockstep.Sim, error) { return locksteptest.New(1, 64), nil }
		}
		s, err := joinpkg.Join(context.Background(), cfg)
		if err == nil {
			t.Cleanup(s.Close)
		}
		return err
	}
	said := map[string]string{}
	for _, tc := range []struct {
		name    string
		content host.Content
	}{{"--defs-manifest", fromManifest}, {"--content", fromContent}} {
		h := hosttest.StartRelay(t, host.Config{TickRate: 200, Relay: host.RelayConfig{ArbiterSecret: secret}, Logger: testkit.Quiet()}, tc.content)
		if err := joinAs(h.Addr, "Arbiter", full, true); err != nil {
			t.Fatalf("%s: the arbiter with the content: %v", tc.name, err)
		}
		if err := joinAs(h.Addr, "Alice", full, false); err != nil {
			t.Fatalf("%s: a player with the content: %v", tc.name, err)
		}
		err := joinAs(h.Addr, "Bob", coreOnly, false)
		var re *joinpkg.RejectedError
		if !errors.As(err, &re) || re.Reason != wire.ReasonDefs {
			t.Fatalf("%s: a player without the mod: %v, want refused for Defs", tc.name, err)
		}
		rep, err := joinpkg.DefsReport(re, coreOnly.Set)
		if err != nil {
			t.Fatalf("%s: the refusal's detail: %v", tc.name, err)
		}
		var text strings.Builder
		rep.WriteText(&text, "host", "this machine")
		for _, def := range []string{"Uranium", "Apparel_Parka", "DustPuff"} {
			if !strings.Contains(text.String(), def) {
				t.Errorf("%s: the report from the refusal does not name the mod's %s:\n%s", tc.name, def, text.String())
			}
		}
		said[tc.name] = fmt.Sprintf("%s %v\n%s", re.Message, re.Statuses, text.String())
		h.Stop(t)
	}
	if said["--defs-manifest"] != said["--content"] {
		t.Errorf("refused from the manifest:\n%s\nfrom the content:\n%s", said["--defs-manifest"], said["--content"])
	}
}

// TestRelayDefsManifestRefused: a manifest that is not one, records scan
// errors or holds no def databases is refused with a sentence naming it.
func TestRelayDefsManifestRefused(t *testing.T) {
	dir := t.TempDir()
	core, _ := writeRealContent(t, dir)
	good, err := os.ReadFile(exportManifest(t, dir, core))
	if err != nil {
		t.Fatal(err)
	}
	m, err := defs.ReadManifest(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, m *defs.Manifest) string {
		var b bytes.Buffer
		if err := defs.WriteManifest(&b, m); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withErrors := *m
	withErrors.ScanErrors = 2
	empty := *m
	empty.Databases = nil
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte(`{"schema":1,"databases":[{"type":"B"},{"type":"A"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"scan errors", write("errors.json", &withErrors), "records 2 scan errors"},
		{"no databases", write("empty.json", &empty), "has no def databases; for a game without any, use --defs-from-arbiter"},
		{"not sorted", garbage, "not sorted"},
		{"missing", filepath.Join(dir, "nope.json"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readManifestContent(tc.path, testkit.Quiet())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v, want one line saying %q", err, tc.want)
			}
		})
	}
}
