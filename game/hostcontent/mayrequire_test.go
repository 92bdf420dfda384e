package hostcontent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// mayRequireContent writes the embedded core, a mod with a plain Widget of
// the given mass and a mod whose Widget the game loads only with Biotech
// active, and loads them as the host and the join tool do.
func mayRequireContent(t *testing.T, mass string) *gamecontent.Bundle {
	t.Helper()
	dir := t.TempDir()
	core := filepath.Join(dir, "core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"one/About/About.xml":  "<ModMetaData><packageId>test.one</packageId><name>one</name></ModMetaData>",
		"one/Defs/Things.xml":  "<Defs><ThingDef><defName>Widget</defName><category>Item</category><mass>" + mass + "</mass></ThingDef></Defs>",
		"two/About/About.xml":  "<ModMetaData><packageId>test.two</packageId><name>two</name></ModMetaData>",
		"two/Defs/Biotech.xml": `<Defs><ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName><category>Item</category><mass>9</mass></ThingDef></Defs>`,
	}
	for p, s := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := gamecontent.Load([]string{core, filepath.Join(dir, "one"), filepath.Join(dir, "two")}, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostRefusesDefsMayRequireHides is case 10 at the host: host and
// joiner differ in the Widget of their first mod, which the game loads
// because the second mod's Widget needs Biotech, which neither has. The
// host must refuse the joiner for its defs.
func TestHostRefusesDefsMayRequireHides(t *testing.T) {
	hb, jb := mayRequireContent(t, "1"), mayRequireContent(t, "2")
	if notes := strings.Join(hb.Notes(), "\n"); !strings.Contains(notes, "1 def(s) and 0 list item(s) are not loaded because a mod their MayRequire names is not in the content") {
		t.Errorf("the host does not say that it left the Widget that needs Biotech out:\n%s", notes)
	}
	w, err := colony.New(hb.Content, colony.Config{Maps: 1, Width: 16, Height: 16, Seed: 1, ThingsPerMap: 2, PawnsPerMap: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, host.Config{}, Content(hb, testkit.Quiet()), w)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := join.Join(ctx, join.Config{Addr: h.Addr, Name: "other", Databases: jb.Summary(), MapLoader: colony.MapLoader(jb.Content), Logger: testkit.Quiet()})
	if err == nil {
		s.Close()
		t.Fatal("the host admitted a joiner whose Widget differs from its own")
	}
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonDefs {
		t.Fatalf("join: %v, want a refusal for the defs", err)
	}
	rep, err := join.DefsReport(re, jb.Set)
	if err != nil {
		t.Fatal(err)
	}
	if db := rep.Databases; len(db) != 1 || db[0].Type != "ThingDef" || len(db[0].Changed) != 1 || db[0].Changed[0].Name != "Widget" {
		t.Errorf("report %+v, want ThingDef Widget changed", db)
	}
}
