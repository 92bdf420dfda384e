package main

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/lockhost/lockhost/host"
)

// notConfig are serve's options that set no host.Config field: where the
// host listens and what it starts from, the secrets and files read to
// fill fields hostConfig sets itself, the admin ways in and the logs.
var notConfig = map[string]bool{
	"config": true, "listen": true, "http": true, "http-token-file": true, "password-file": true,
	"new": true, "force-new": true, "recover": true, "data-dir": true,
	"tls": true, "tls-cert": true, "tls-key": true, "console": true, "rcon": true, "rcon-password-file": true,
	"maps": true, "map-size": true, "seed": true, "things-per-map": true, "pawns-per-map": true,
	"idle-maps": true, "world-mib": true, "content": true, "game-version": true, "mods-config": true,
	"log-level": true, "log-format": true,
}

// TestServeFlagDefaults holds the default of every serve option that sets
// a host.Config field to that field's value in host.DefaultConfig, and
// makes every option either such an option or a named exception, so a
// new one cannot slip past.
func TestServeFlagDefaults(t *testing.T) {
	def := host.DefaultConfig()
	byName := map[string]configField{}
	for _, f := range configFields {
		byName[f.flag] = f
	}
	seen := map[string]bool{}
	for _, fl := range serveFlags() {
		name := fl.Names()[0]
		seen[name] = true
		f, ok := byName[name]
		if !ok {
			if !notConfig[name] {
				t.Errorf("--%s is neither in configFields nor in notConfig", name)
			}
			continue
		}
		if notConfig[name] {
			t.Errorf("--%s is in both configFields and notConfig", name)
		}
		want := reflect.ValueOf(f.field(&def)).Elem().Interface()
		got := reflect.ValueOf(fl).Elem().FieldByName("Value").Interface()
		if s, ok := want.(fmt.Stringer); ok && reflect.TypeOf(got).Kind() == reflect.String {
			want = s.String() // an enum, which the option takes by name
		}
		if got != want {
			t.Errorf("--%s defaults to %v (%T); host.DefaultConfig has %v (%T)", name, got, got, want, want)
		}
	}
	for _, f := range configFields {
		if !seen[f.flag] {
			t.Errorf("configFields names --%s, which serve does not have", f.flag)
		}
	}
}
