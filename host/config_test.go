package host_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
)

// leaves calls fn with the dotted path and value of every field of v that
// is not itself a struct, looking into nested structs.
func leaves(v reflect.Value, prefix string, fn func(path string, f reflect.Value)) {
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue // set by the package itself (Relay's mode flag)
		}
		name := prefix + v.Type().Field(i).Name
		if f := v.Field(i); f.Kind() == reflect.Struct {
			leaves(f, name+".", fn)
		} else {
			fn(name, f)
		}
	}
}

// TestDefaultConfigFilled checks that DefaultConfig fills every field but
// those whose default is "none", and that a zero Config's Defaults is
// DefaultConfig: the defaults are written once.
func TestDefaultConfigFilled(t *testing.T) {
	empty := map[string]bool{
		"Admission.Password": true, "Admission.TLS": true, "Admission.BanFile": true,
		"Desync.Dir": true, "Join.LazyJoinPoints": true,
		"Save.Path": true, "Save.Resumed": true, "Save.Meta": true,
		"Record.Dir": true, "Record.Version": true,
		"Observer": true, "AfterTick": true, "Reach": true,
		"Relay.ArbiterSecret": true, "Relay.Resume": true, "Relay.DefsFromArbiter": true,
		// The zero values of these enums are their defaults.
		"Factions": true, "Lag.Policy": true,
	}
	def := host.DefaultConfig()
	got := host.Config{}.Defaults()
	gv := reflect.ValueOf(got)
	leaves(reflect.ValueOf(def), "", func(path string, f reflect.Value) {
		if f.IsZero() != empty[path] {
			t.Errorf("DefaultConfig().%s = %v: zero %v, want zero %v", path, f, f.IsZero(), empty[path])
		}
		g := gv.FieldByIndex(fieldIndex(gv.Type(), path))
		if f.Kind() == reflect.Func {
			if g.Pointer() != f.Pointer() {
				t.Errorf("Config{}.Defaults().%s is not DefaultConfig's", path)
			}
			return
		}
		if !reflect.DeepEqual(g.Interface(), f.Interface()) {
			t.Errorf("Config{}.Defaults().%s = %v, DefaultConfig has %v", path, g, f)
		}
	})
	if err := def.Validate(); err != nil {
		t.Errorf("DefaultConfig does not validate: %v", err)
	}
}

// fieldIndex is the index path of a dotted field path in t.
func fieldIndex(t reflect.Type, path string) []int {
	var idx []int
	for name := range strings.SplitSeq(path, ".") {
		f, _ := t.FieldByName(name)
		idx = append(idx, f.Index...)
		t = f.Type
	}
	return idx
}

// TestDefaultsKeepsSetFields checks that Defaults leaves set fields alone,
// turns the -1 of a count that can be none into 0, and derives the hash
// window from the lag and hash interval only when it is unset.
func TestDefaultsKeepsSetFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   host.Config
		check func(host.Config) bool
	}{
		{"set field kept", host.Config{Limits: host.LimitConfig{MaxPlayers: 3}},
			func(c host.Config) bool { return c.Limits.MaxPlayers == 3 && c.Limits.MaxSpectators == 4 }},
		{"no spectators", host.Config{Limits: host.LimitConfig{MaxSpectators: -1}},
			func(c host.Config) bool { return c.Limits.MaxSpectators == 0 }},
		{"no hash checks", host.Config{Desync: host.DesyncConfig{HashEvery: -1}},
			func(c host.Config) bool { return c.Desync.HashEvery == 0 && c.Desync.HashWindow == 1800 }},
		{"window derived from lag", host.Config{Lag: host.LagConfig{MaxLag: 2000}},
			func(c host.Config) bool { return c.Desync.HashWindow == 4000 }},
		{"window derived from hash interval", host.Config{Desync: host.DesyncConfig{HashEvery: 1000}},
			func(c host.Config) bool { return c.Desync.HashWindow == 4000 }},
		{"window kept", host.Config{Desync: host.DesyncConfig{HashWindow: 100}, Lag: host.LagConfig{MaxLag: 2000}},
			func(c host.Config) bool { return c.Desync.HashWindow == 100 }},
		{"negative duration kept", host.Config{Lag: host.LagConfig{MaxHold: -1}, Save: host.SaveConfig{Every: -time.Second}},
			func(c host.Config) bool {
				return c.Lag.MaxHold == -1 && c.Save.Every == -time.Second && c.Save.Keep == 5
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.Defaults(); !tc.check(got) {
				t.Errorf("Defaults() gave limits %+v, lag %+v, desync %+v, save every %v keep %d",
					got.Limits, got.Lag, got.Desync, got.Save.Every, got.Save.Keep)
			}
		})
	}
}
