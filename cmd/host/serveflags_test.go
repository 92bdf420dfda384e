package main

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/urfave/cli/v2"
)

// notConfig are serve's options that set no host.Config field: where the
// host listens and what it starts from, the secrets and files read to
// fill fields hostConfig sets itself, the admin ways in and the logs.
var notConfig = map[string]bool{
	"config": true, "listen": true, "discovery-port": true, "max-upload-rate": true, "http": true, "http-token-file": true, "http-origin": true, "password-file": true,
	"new": true, "force-new": true, "recover": true, "data-dir": true,
	"tls": true, "tls-cert": true, "tls-key": true, "console": true, "rcon": true, "rcon-password-file": true,
	"maps": true, "map-size": true, "seed": true, "things-per-map": true, "pawns-per-map": true,
	"idle-maps": true, "world-mib": true, "content": true, "game-version": true, "mods-config": true,
	"log-level": true, "log-format": true, "relay": true, "arbiter-secret-file": true, "relay-world-mib": true,
	"defs-manifest": true, "defs-from-arbiter": true, "agones": true, "agones-idle": true, "agones-first-player": true, "port-mapping": true, "coordinator": true, "relay-only": true, "debug-invite-no-addrs": true,
	"record": true, "record-segment-mib": true, "record-keep": true, "share-content": true, "share-content-except": true,
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

// TestOffConvention holds every number option of serve and saves new to
// the one convention numbersRule states: -1 is the only value outside an
// option's range that means something (off: none, no limit, never), 0 is
// never special, and the option's own default is a value it accepts.
func TestOffConvention(t *testing.T) {
	newCmd := savesCommand().Subcommands[0]
	if newCmd.Name != "new" {
		t.Fatalf("saves' first command is %q, not new", newCmd.Name)
	}
	for _, cmd := range []struct {
		name  string
		flags []cli.Flag
	}{{"serve", serveFlags()}, {"saves new", newCmd.Flags}} {
		for _, fl := range cmd.flags {
			name := fl.Names()[0]
			r, ok := numberRules()[name]
			if !ok {
				continue
			}
			for v, meaning := range r.means {
				if v != -1 {
					t.Errorf("%s --%s: %v means %q; only -1 may mean something outside the range", cmd.name, name, v, meaning)
				}
			}
			if _, off := r.means[-1]; off && r.min <= 0 {
				t.Errorf("%s --%s: takes %v and up beside its off value -1", cmd.name, name, r.min)
			}
			var def float64
			switch fl := fl.(type) {
			case *cli.IntFlag:
				def = float64(fl.Value)
			case *cli.Uint64Flag:
				def = float64(fl.Value)
			case *cli.Float64Flag:
				def = fl.Value
			case *cli.DurationFlag:
				def = fl.Value.Seconds()
				if _, off := r.means[-1]; off && def < 0 && fl.Value != -time.Second {
					t.Errorf("%s --%s: default %v; the off value of a duration is -1s", cmd.name, name, fl.Value)
				}
			}
			if _, off := r.means[def]; !off && (def < r.min || r.max != 0 && def > r.max) {
				t.Errorf("%s --%s: default %v is neither in %v..%v nor its off value", cmd.name, name, def, r.min, r.max)
			}
		}
	}
}
