package main

import (
	"strings"
	"testing"

	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/saves"
)

// TestSameContent checks that a save made with other def databases is
// refused, and that the refusal names the databases that differ, also
// one the content lacks.
func TestSameContent(t *testing.T) {
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	same := hostcontent.SaveMeta(bundle, "g")
	if err := sameContent(same, bundle); err != nil {
		t.Fatalf("the bundle's own databases: %v", err)
	}
	first := same.Databases[0].Type

	changed := hostcontent.SaveMeta(bundle, "g")
	changed.Databases[0].Hash++
	extra := hostcontent.SaveMeta(bundle, "g")
	extra.Databases = append(extra.Databases, saves.DefSummary{Type: "UnknownDef", Count: 1, Hash: 7})
	missing := hostcontent.SaveMeta(bundle, "g")
	missing.Databases = missing.Databases[1:]
	twice := hostcontent.SaveMeta(bundle, "g")
	twice.Databases = append(twice.Databases, twice.Databases[0])
	for _, tc := range []struct {
		name string
		meta saves.Meta
		want string
	}{
		{"hash differs", changed, first},
		{"type the content lacks", extra, "UnknownDef"},
		{"type the save lacks", missing, first},
		{"type listed twice", twice, first},
	} {
		err := sameContent(tc.meta, bundle)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), "def databases that differ: ["+tc.want+"]") {
			t.Errorf("%s: %v, want it to name %s", tc.name, err, tc.want)
		}
	}
}
