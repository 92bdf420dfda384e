package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/urfave/cli/v2"
)

// exampleConfig is the commented example at the repository root.
const exampleConfig = "../../host.example.toml"

// serveRun is what "host serve" saw once its flags and config file were
// read.
type serveRun struct {
	code   int
	stderr string
	// values are the flags' values as text (see flagText).
	values map[string]string
	// cfg is what hostConfig built, when asked for.
	cfg host.Config
}

// runServe runs "host serve args..." through the real command, its flags
// and its config file handling, with the action replaced by one that
// records the flags' values and, if buildCfg, the host.Config serve would
// run with. Nothing listens.
func runServe(t *testing.T, buildCfg bool, args ...string) serveRun {
	t.Helper()
	app := newApp()
	var got serveRun
	for _, cmd := range app.Commands {
		if cmd.Name != "serve" {
			continue
		}
		cmd.Action = func(c *cli.Context) error {
			got.values = map[string]string{}
			for _, f := range c.Command.Flags {
				got.values[f.Names()[0]] = flagText(c, f.Names()[0])
			}
			if !buildCfg {
				return nil
			}
			cfg, err := hostConfig(c, nil, testkit.Quiet())
			got.cfg = cfg
			return err
		}
	}
	var stderr bytes.Buffer
	got.code = cliutil.Run(app, append([]string{"host", "serve"}, args...), &stderr, nil)
	got.stderr = stderr.String()
	return got
}

// flagText is a flag's value as text; lists are quoted element by element
// so that commas inside an element show.
func flagText(c *cli.Context, name string) string {
	if ss, ok := c.Value(name).(cli.StringSlice); ok {
		return fmt.Sprintf("%q", ss.Value())
	}
	return fmt.Sprint(c.Value(name))
}

// cleanEnv unsets the environment variables serve reads, for the test.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{configEnv, dataDirEnv, cliutil.PasswordEnv, web.TokenEnv} {
		t.Setenv(k, "") // restores the old value after the test
		os.Unsetenv(k)
	}
}

// writeFile writes text to name in a temporary folder and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFileValuesReachTheHost(t *testing.T) {
	cleanEnv(t)
	path := writeFile(t, "host.toml", `
listen = "127.0.0.1:4000"
game-name = "Night shift"
tick-rate = 30
max-spectators = -1     # none
factions = "per-player"
conn-rate = 2.5
command-rate = 40       # an integer where the flag takes a float
save = "night.lhsave"
autosave = "90s"
max-lag = 300
lag-policy = "drop"
lazy-join-points = true
desync-window = "1h"
seed = 42
content = ["Mods/A,B", "Mods/C"]
log-format = "json"
`)
	got := runServe(t, true, "--config", path)
	if got.code != cliutil.ExitOK {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	cfg := got.cfg
	checks := []struct {
		what      string
		got, want any
	}{
		{"GameName", cfg.GameName, "Night shift"},
		{"TickRate", cfg.TickRate, 30},
		{"MaxSpectators", cfg.Limits.MaxSpectators, -1},
		{"Factions", cfg.Factions, roster.FactionsPerPlayer},
		{"ConnRate", cfg.Admission.ConnRate, 2.5},
		{"ConnBurst", cfg.Admission.ConnBurst, 5},
		{"CommandRate", cfg.Limits.CommandRate, 40.0},
		{"Save.Path", cfg.Save.Path, "night.lhsave"},
		{"Save.Every", cfg.Save.Every, 90 * time.Second},
		{"MaxLag", cfg.Lag.MaxLag, uint64(300)},
		{"LagPolicy", cfg.Lag.Policy, host.LagDrop},
		{"LazyJoinPoints", cfg.Join.LazyJoinPoints, true},
		{"DesyncWindow", cfg.Desync.Window, time.Hour},
		{"--listen", got.values["listen"], "127.0.0.1:4000"},
		{"--seed", got.values["seed"], "42"},
		{"--content", got.values["content"], `["Mods/A,B" "Mods/C"]`},
		{"--log-format", got.values["log-format"], "json"},
		{"--max-players (not in the file)", cfg.Limits.MaxPlayers, 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestConfigFilePrecedence(t *testing.T) {
	tests := []struct {
		name    string
		file    string            // given with --config when not empty
		envFile string            // named by LOCKHOST_CONFIG when not empty
		env     map[string]string // more environment
		args    []string
		key     string
		want    string
	}{
		{name: "file over default", file: "tick-rate = 30", key: "tick-rate", want: "30"},
		{name: "default without the key", file: "seed = 5", key: "tick-rate", want: "60"},
		{name: "flag over file", file: "tick-rate = 30", args: []string{"--tick-rate", "20"}, key: "tick-rate", want: "20"},
		{name: "flag at its default over file", file: "tick-rate = 30", args: []string{"--tick-rate", "60"}, key: "tick-rate", want: "60"},
		{name: "false flag over true in file", file: "lazy-join-points = true", args: []string{"--lazy-join-points=false"}, key: "lazy-join-points", want: "false"},
		{name: "flag list replaces file list", file: `content = ["a", "b"]`, args: []string{"--content", "c"}, key: "content", want: `["c"]`},
		{name: "file over unset environment variable", file: `data-dir = "from-file"`, key: "data-dir", want: "from-file"},
		{name: "environment over file", file: `data-dir = "from-file"`, env: map[string]string{dataDirEnv: "from-env"}, key: "data-dir", want: "from-env"},
		{name: "flag over environment and file", file: `data-dir = "from-file"`, env: map[string]string{dataDirEnv: "from-env"},
			args: []string{"--data-dir", "from-flag"}, key: "data-dir", want: "from-flag"},
		{name: "LOCKHOST_CONFIG names the file", envFile: "tick-rate = 11", key: "tick-rate", want: "11"},
		{name: "--config over LOCKHOST_CONFIG", file: "tick-rate = 22", envFile: "tick-rate = 11", key: "tick-rate", want: "22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeFile(t, "host.toml", tt.file)}, args...)
			}
			if tt.envFile != "" {
				t.Setenv(configEnv, writeFile(t, "env.toml", tt.envFile))
			}
			got := runServe(t, false, args...)
			if got.code != cliutil.ExitOK {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			if v := got.values[tt.key]; v != tt.want {
				t.Errorf("%s = %s, want %s", tt.key, v, tt.want)
			}
		})
	}
}

// TestConfigFilePassword checks that the password in the environment wins
// over a password-file key as every environment variable wins over the
// file, while --password-file on the command line still wins over both.
func TestConfigFilePassword(t *testing.T) {
	pwFile := writeFile(t, "pw", "from-file\n")
	tests := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{name: "password-file key", want: "from-file"},
		{name: "environment over password-file key", env: "from-env", want: "from-env"},
		{name: "--password-file over environment", env: "from-env", args: []string{"--password-file", pwFile}, want: "from-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			if tt.env != "" {
				t.Setenv(cliutil.PasswordEnv, tt.env)
			}
			path := writeFile(t, "host.toml", "password-file = "+strconv.Quote(pwFile)+"\n")
			got := runServe(t, true, append([]string{"--config", path}, tt.args...)...)
			if got.code != cliutil.ExitOK {
				t.Fatalf("exit %d: %s", got.code, got.stderr)
			}
			if string(got.cfg.Admission.Password) != tt.want {
				t.Errorf("password %q, want %q", got.cfg.Admission.Password, tt.want)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		file    string // the file's text
		path    string // instead of a file with that text
		want    []string
		notWant []string
	}{
		{name: "unknown key near a flag", file: "listen = \":1\"\ntick-rat = 5\n",
			want: []string{"line 2", `unknown key "tick-rat"`, `did you mean "tick-rate"?`}},
		{name: "underscores for dashes", file: "max_players = 3",
			want: []string{"line 1", `did you mean "max-players"?`}},
		{name: "unknown key far from any flag", file: "colour = \"red\"",
			want: []string{"line 1", `unknown key "colour"`, "host serve --help"}, notWant: []string{"did you mean"}},
		{name: "help is no setting", file: "help = true", want: []string{`unknown key "help"`}},
		{name: "table", file: "[serve]\nlisten = \":1\"\n",
			want: []string{"line 1", `unknown key "serve": tables are not used`}},
		{name: "string for an integer", file: "\n\ntick-rate = \"fast\"",
			want: []string{"line 3", `tick-rate must be an integer, not the string "fast"`}},
		{name: "float for an integer", file: "tick-rate = 1.5",
			want: []string{`tick-rate must be an integer, not the number 1.5`}},
		{name: "negative for an unsigned integer", file: "max-lag = -1",
			want: []string{`max-lag must be an integer of 0 or more, not the integer -1`}},
		{name: "string for a boolean", file: `tls = "yes"`,
			want: []string{`tls must be true or false, not the string "yes"`}},
		{name: "integer for a string", file: "listen = 30502",
			want: []string{`listen must be a string, not the integer 30502`}},
		{name: "string for a number", file: `conn-rate = "fast"`,
			want: []string{`conn-rate must be a number, not the string "fast"`}},
		{name: "not a duration", file: `autosave = "soon"`,
			want: []string{`autosave must be a duration string such as "90s"`, `not the string "soon"`}},
		{name: "integer for a duration", file: "autosave = 5",
			want: []string{`autosave must be a duration string`, "not the integer 5"}},
		{name: "string for a list", file: `content = "Mods"`,
			want: []string{`content must be an array of strings such as ["a", "b"], not the string "Mods"`}},
		{name: "bad list element", file: `content = ["Mods", 2]`,
			want: []string{`content: element 2 must be a string, not the integer 2`}},
		{name: "password", file: "listen = \":1\"\npassword = \"hunter2\"\n",
			want:    []string{"line 2", `key "password": secrets are never read from a config file`, cliutil.PasswordEnv, "password-file"},
			notWant: []string{"hunter2"}},
		{name: "other secret", file: `session_secret = "abc123"`,
			want: []string{"secrets are never read", cliutil.PasswordEnv}, notWant: []string{"abc123"}},
		{name: "token", file: `token = "abc123"`,
			want: []string{`key "token": secrets are never read from a config file`, web.TokenEnv, "http-token-file"}, notWant: []string{"abc123", cliutil.PasswordEnv}},
		{name: "http token", file: `http-token = "abc123"`,
			want: []string{"secrets are never read", web.TokenEnv}, notWant: []string{"abc123"}},
		{name: "config inside the file", file: `config = "other.toml"`,
			want: []string{"config cannot be set inside a config file", configEnv}},
		{name: "bad syntax", file: "listen = \":1\"\ntick-rate = \n",
			want: []string{"line 2", "this is not valid TOML"}},
		{name: "key twice", file: "seed = 1\nseed = 2\n",
			want: []string{"line 2", "this is not valid TOML"}},
		{name: "missing file", path: filepath.Join(dir, "nope.toml"),
			want: []string{"config file " + filepath.Join(dir, "nope.toml") + " does not exist"}},
		{name: "unreadable file", path: dir,
			want: []string{"config file " + dir + " cannot be read: is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			path := tt.path
			if path == "" {
				path = writeFile(t, "host.toml", tt.file)
			}
			got := runServe(t, false, "--config", path)
			if got.code != cliutil.ExitUsage {
				t.Fatalf("exit %d, want %d (usage); stderr: %s", got.code, cliutil.ExitUsage, got.stderr)
			}
			msg, _, _ := strings.Cut(got.stderr, "\n")
			if !strings.HasPrefix(msg, "host: config file "+path) {
				t.Errorf("the error does not start with the file: %s", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\ndoes not contain %q", msg, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got.stderr, w) {
					t.Errorf("error %q\ncontains %q", got.stderr, w)
				}
			}
		})
	}
}

// TestConfigFileValueRefusedLater checks, through the real serve action,
// that a value the file gives and serve refuses is traced to the file.
func TestConfigFileValueRefusedLater(t *testing.T) {
	cleanEnv(t)
	path := writeFile(t, "host.toml", "listen = \"127.0.0.1:0\"\nlog-level = \"loud\"\n")
	// --mods-config without --content fails before any world is made, in
	// case the log level were not applied.
	var stderr bytes.Buffer
	code := cliutil.Run(newApp(), []string{"host", "serve", "--config", path, "--mods-config", "nowhere.xml"}, &stderr, nil)
	if code != cliutil.ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, cliutil.ExitUsage, stderr.String())
	}
	want := fmt.Sprintf(`--log-level "loud": use debug, info, warn or error (set in config file %s: log-level on line 2)`, path)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q\ndoes not contain %q", stderr.String(), want)
	}
}

func TestConfigExplain(t *testing.T) {
	cf := &configFile{path: "host.toml", from: []setting{{name: "tls", line: 3}, {name: "tls-key", line: 5}, {name: "seed", line: 9}}}
	tests := []struct {
		err  error
		want string
	}{
		{cliutil.Usagef("--tls-cert and --tls-key need --tls"), "--tls-cert and --tls-key need --tls (set in config file host.toml: tls on line 3, tls-key on line 5)"},
		{cliutil.Usagef("--tls-cert is bad"), "--tls-cert is bad"},
		{cliutil.Usagef("--seeds is not --seed-x"), "--seeds is not --seed-x"},
		{errors.New("world: too big"), "world: too big"},
	}
	for _, tt := range tests {
		err := cf.explain(func(*cli.Context) error { return tt.err })(nil)
		if err.Error() != tt.want {
			t.Errorf("explain(%q) = %q, want %q", tt.err, err, tt.want)
		}
		var ue *cliutil.UsageError
		if errors.As(tt.err, &ue) && !errors.As(err, &ue) {
			t.Errorf("explain(%q) lost the usage error", tt.err)
		}
	}
	if err := cf.explain(func(*cli.Context) error { return nil })(nil); err != nil {
		t.Errorf("explain(nil) = %v", err)
	}
}

// TestConfigFileAnyFlagType checks that the loader follows the flags it is
// given, whatever their types, so a flag added to serve later is covered.
func TestConfigFileAnyFlagType(t *testing.T) {
	cleanEnv(t)
	var got map[string]any
	cf := &configFile{}
	app := &cli.App{Name: "t", Commands: []*cli.Command{{
		Name: "run",
		Flags: []cli.Flag{
			configFlag(),
			&cli.Int64Flag{Name: "i64"},
			&cli.UintFlag{Name: "u"},
			&cli.PathFlag{Name: "p"},
			&cli.IntSliceFlag{Name: "ints"},
			&cli.Float64SliceFlag{Name: "floats"},
			&cli.StringSliceFlag{Name: "strs", Value: cli.NewStringSlice("default")},
		},
		Before: cf.apply,
		Action: func(c *cli.Context) error {
			got = map[string]any{"i64": c.Int64("i64"), "u": c.Uint("u"), "p": c.Path("p"),
				"ints": c.IntSlice("ints"), "floats": c.Float64Slice("floats"), "strs": c.StringSlice("strs")}
			return nil
		},
	}}}
	path := writeFile(t, "t.toml", `
i64 = -7
u = 7
p = "some/where"
ints = [1, 2, 3]
floats = [0.5, 2]
strs = []
`)
	var stderr bytes.Buffer
	if code := cliutil.Run(app, []string{"t", "run", "--config", path}, &stderr, nil); code != cliutil.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := map[string]any{"i64": int64(-7), "u": uint(7), "p": "some/where",
		"ints": []int{1, 2, 3}, "floats": []float64{0.5, 2}, "strs": []string{}}
	for k, w := range want {
		if fmt.Sprintf("%#v", got[k]) != fmt.Sprintf("%#v", w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
}

// settingLine is a setting of the example file: "key = value", active or
// commented out as "# key = value".
var settingLine = regexp.MustCompile(`^(# ?)?([a-z][a-z0-9-]*) *= *(.*)$`)

// exampleKeys reads the example file: each key it sets or shows commented
// out, and the text with every setting uncommented.
func exampleKeys(t *testing.T) (keys []string, uncommented string) {
	t.Helper()
	b, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if m := settingLine.FindStringSubmatch(line); m != nil {
			keys = append(keys, m[2])
			line = m[2] + " = " + m[3]
		}
		out.WriteString(line + "\n")
	}
	return keys, out.String()
}

// TestExampleConfigComplete keeps host.example.toml in step with serve's
// flags: every flag is shown once, the file loads as it is and with every
// setting uncommented, and the value it shows for a flag with a default
// is that default.
func TestExampleConfigComplete(t *testing.T) {
	cleanEnv(t)
	keys, uncommented := exampleKeys(t)
	for _, f := range serveCommand().Flags {
		name := f.Names()[0]
		if name == "config" || name == "help" {
			continue
		}
		if h, ok := f.(interface{ IsVisible() bool }); ok && !h.IsVisible() {
			continue // a debugging flag, not for a config file
		}
		switch n := strings.Count(" "+strings.Join(keys, " ")+" ", " "+name+" "); n {
		case 0:
			t.Errorf("host.example.toml does not show serve flag --%s; add it with its default and a one-line comment", name)
		case 1:
		default:
			t.Errorf("host.example.toml shows --%s %d times", name, n)
		}
	}

	defaults := runServe(t, false)
	if defaults.code != cliutil.ExitOK {
		t.Fatalf("serve with no config: exit %d: %s", defaults.code, defaults.stderr)
	}
	asIs := runServe(t, false, "--config", exampleConfig)
	if asIs.code != cliutil.ExitOK {
		t.Fatalf("the example as it is: exit %d: %s", asIs.code, asIs.stderr)
	}
	for k, v := range defaults.values {
		if k != "config" && asIs.values[k] != v {
			t.Errorf("the example as it is changes --%s from %s to %s; what it leaves active must be the default", k, v, asIs.values[k])
		}
	}

	all := runServe(t, false, "--config", writeFile(t, "host.toml", uncommented))
	if all.code != cliutil.ExitOK {
		t.Fatalf("the example with every setting uncommented: exit %d: %s", all.code, all.stderr)
	}
	zero := []string{"", "0", "0s", "false", "[]"}
	for _, k := range keys {
		def := defaults.values[k]
		if slices.Contains(zero, def) {
			continue // no default to show: the example shows a sample value
		}
		if all.values[k] != def {
			t.Errorf("host.example.toml shows %s as %s, but its default is %s", k, all.values[k], def)
		}
	}
}

func TestServeHelpMentionsConfigFile(t *testing.T) {
	cleanEnv(t)
	app := newApp()
	var stdout, stderr bytes.Buffer
	app.Writer = &stdout
	// A broken config file does not stand in the way of help.
	path := writeFile(t, "host.toml", "nonsense = 1\n")
	if code := cliutil.Run(app, []string{"host", "serve", "--config", path, "--help"}, &stderr, nil); code != cliutil.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"--config FILE", "$" + configEnv, "host.example.toml"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("serve --help does not mention %q", w)
		}
	}
}

func TestNearestName(t *testing.T) {
	names := []string{"listen", "tick-rate", "max-players", "tls", "tls-cert", "seed", "keep"}
	tests := []struct{ key, want string }{
		{"tick-rat", "tick-rate"},
		{"tickrate", "tick-rate"},
		{"Tick_Rate", "tick-rate"},
		{"max_players", "max-players"},
		{"tls-crt", "tls-cert"},
		{"seeds", "seed"},
		{"port", ""},
		{"colour", ""},
		{"keys", ""},
	}
	for _, tt := range tests {
		if got := nearestName(tt.key, names); got != tt.want {
			t.Errorf("nearestName(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

// exampleComment is the comment above key's line in host.example.toml:
// the comment lines between it and the setting before it.
func exampleComment(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^(# )?[a-z][a-z0-9-]* = `)
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimPrefix(l, "# "), key+" = ") {
			continue
		}
		var comment []string
		for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "#") && !setting.MatchString(lines[j]); j-- {
			comment = append([]string{strings.TrimPrefix(lines[j], "# ")}, comment...)
		}
		return strings.Join(comment, " ")
	}
	t.Fatalf("host.example.toml has no %s", key)
	return ""
}

// TestExampleConfigHTTPSaysWhatItOpens: the example's http comment names
// every path the listener serves, as serve --help does, players' /ws and
// /play included: opening it to the network lets players in.
func TestExampleConfigHTTPSaysWhatItOpens(t *testing.T) {
	comment := exampleComment(t, "http")
	for _, path := range []string{"/metrics", "/healthz", "/ws", "/play"} {
		if !strings.Contains(comment, path) {
			t.Errorf("the http comment does not name %s:\n%s", path, comment)
		}
	}
}
