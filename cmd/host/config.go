package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/rcon"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/urfave/cli/v2"
)

// configEnv names the config file when --config is not given.
const configEnv = "LOCKHOST_CONFIG"

// configFlag is the --config flag of a command whose other flags a config
// file may set (see configFile).
func configFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "config",
		EnvVars: []string{configEnv},
		Usage: "read settings from this TOML `FILE`: one key per option, named as the option " +
			`(tick-rate = 60); the command line and environment variables win over it; see host.example.toml`,
	}
}

// envBeatsFile names settings that an environment variable replaces
// although their flag does not read it: the session password (or status
// token) in the environment stands in for a password (token) file, so it
// wins over that key the way every other environment variable wins over
// the file.
var envBeatsFile = map[string]string{"password-file": cliutil.PasswordEnv, "http-token-file": web.TokenEnv,
	"rcon-password-file": rcon.PasswordEnv}

// configFile reads the TOML file that --config names into the command's
// flags. Its keys are the command's flag names and its values the flags'
// values in TOML types. A value applies only where neither the command
// line nor an environment variable set the flag, so the precedence is
// command line, then environment, then file, then the flag's default.
// Secrets never come from the file. The zero value is ready to use; one
// configFile serves one command.
type configFile struct {
	path string
	// from are the settings taken from the file, in file order.
	from []setting
}

// setting is one key of a config file, checked against its flag.
type setting struct {
	name string
	line int
	// values are handed to the flag's Set in order.
	values []string
}

// apply is the command's Before hook: it reads the file --config names,
// if any, and sets every flag the file gives that is not set already.
func (cf *configFile) apply(c *cli.Context) error {
	cf.path, cf.from = c.String("config"), nil
	if cf.path == "" {
		return nil
	}
	settings, err := readConfig(cf.path, c.Command.Flags)
	if err != nil {
		return err
	}
	for _, s := range settings {
		if c.IsSet(s.name) {
			continue
		}
		if env := envBeatsFile[s.name]; env != "" && os.Getenv(env) != "" {
			continue
		}
		for _, v := range s.values {
			if err := c.Set(s.name, v); err != nil {
				return cliutil.Usagef("%s: the value of %s is refused: %v", where(cf.path, s.line), s.name, err)
			}
		}
		cf.from = append(cf.from, s)
	}
	return nil
}

// explain wraps a command's action: an error that names a flag whose value
// came from the file says where in the file that value is.
func (cf *configFile) explain(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		err := action(c)
		if err == nil {
			return nil
		}
		var named []string
		for _, s := range cf.from {
			if mentionsFlag(err.Error(), s.name) {
				named = append(named, fmt.Sprintf("%s on line %d", s.name, s.line))
			}
		}
		if len(named) == 0 {
			return err
		}
		return fmt.Errorf("%w (set in config file %s: %s)", err, cf.path, strings.Join(named, ", "))
	}
}

// mentionsFlag reports whether msg names --name, and not merely a longer
// flag that starts with it.
func mentionsFlag(msg, name string) bool {
	flag := "--" + name
	for i := strings.Index(msg, flag); i >= 0; {
		end := i + len(flag)
		if end == len(msg) || !isFlagNameByte(msg[end]) {
			return true
		}
		next := strings.Index(msg[end:], flag)
		if next < 0 {
			break
		}
		i = end + next
	}
	return false
}

func isFlagNameByte(b byte) bool {
	return b == '-' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// where is the place in a config file an error is about.
func where(path string, line int) string {
	if line <= 0 {
		return "config file " + path
	}
	return fmt.Sprintf("config file %s, line %d", path, line)
}

// readConfig reads and checks the config file at path against flags. It
// returns its settings in file order, or the first problem as a usage
// error naming the file, the line and the key.
func readConfig(path string, flags []cli.Flag) ([]setting, error) {
	b, doc, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	settable := map[string]cli.Flag{}
	var names []string
	for _, f := range flags {
		name := f.Names()[0]
		if name == "config" || name == "help" {
			continue
		}
		settable[name] = f
		names = append(names, name)
	}
	lines := keyLines(b)
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := lines[a] - lines[b]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	settings := make([]setting, 0, len(keys))
	for _, k := range keys {
		values, err := checkSetting(k, doc[k], settable, names)
		if err != nil {
			return nil, cliutil.Usagef("%s: %v", where(path, lines[k]), err)
		}
		settings = append(settings, setting{name: k, line: lines[k], values: values})
	}
	return settings, nil
}

// loadConfig reads the TOML file at path, returning its bytes and its
// top-level keys, or why not as a usage error naming the file (and the
// line).
func loadConfig(path string) ([]byte, map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, cliutil.Usagef("config file %s does not exist", path)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, nil, cliutil.Usagef("config file %s cannot be read: %v", path, err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, nil, cliutil.Usagef("%s: this is not valid TOML: %s", where(path, line), strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, nil, cliutil.Usagef("config file %s is not valid TOML: %v", path, err)
	}
	return b, doc, nil
}

// keyLines maps each top-level key of a valid TOML document (the first
// part of a dotted key, or the name of a table) to the line it first
// appears on.
func keyLines(doc []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(doc)
	inTable := false
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			inTable = true
		case unstable.KeyValue:
			if inTable {
				continue // a key of a table, not of the top level
			}
		default:
			continue
		}
		it := e.Key()
		if !it.Next() {
			continue
		}
		k := it.Node()
		if _, seen := lines[string(k.Data)]; !seen {
			lines[string(k.Data)] = p.Shape(k.Raw).Start.Line
		}
	}
	return lines
}

// looksSecret reports whether a key that is no flag seems meant to hold a
// secret.
func looksSecret(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "passwd", "passphrase", "secret", "token"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// checkSetting checks key = v against the flags the file may set and
// returns what to hand the flag's Set. Its errors are the sentence after
// the file and line.
func checkSetting(key string, v any, settable map[string]cli.Flag, names []string) ([]string, error) {
	if key == "config" {
		return nil, fmt.Errorf("config cannot be set inside a config file; give --config on the command line or set %s", configEnv)
	}
	f, ok := settable[key]
	if !ok {
		switch {
		case strings.Contains(strings.ToLower(key), "token"):
			return nil, fmt.Errorf("key %q: secrets are never read from a config file; put the status page's token in the environment variable %s, or in a file named by http-token-file",
				key, web.TokenEnv)
		case looksSecret(key):
			return nil, fmt.Errorf("key %q: secrets are never read from a config file; put the session password in the environment variable %s, or in a file named by password-file",
				key, cliutil.PasswordEnv)
		case isTable(v):
			return nil, fmt.Errorf("unknown key %q: tables are not used, write every setting at the top level of the file", key)
		}
		if near := nearestName(key, names); near != "" {
			return nil, fmt.Errorf("unknown key %q; did you mean %q?", key, near)
		}
		return nil, fmt.Errorf("unknown key %q: the keys are the names of serve's flags, listed by 'host serve --help'", key)
	}
	kind, list := flagKind(f)
	if !list {
		s, err := kind.text(v)
		if err != nil {
			return nil, fmt.Errorf("%s must be %s, not %s", key, err, describe(v))
		}
		return []string{s}, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an array of %s such as [%s], not %s", key, kind.plural(), kind.sample(), describe(v))
	}
	values := make([]string, 0, len(arr))
	for i, e := range arr {
		s, err := kind.text(e)
		if err != nil {
			return nil, fmt.Errorf("%s: element %d must be %s, not %s", key, i+1, err, describe(e))
		}
		values = append(values, s)
	}
	if _, ok := f.(*cli.StringSliceFlag); ok {
		// One serialized value replaces the whole list, so that commas
		// in an element are not taken as separators.
		return []string{cli.NewStringSlice(values...).Serialize()}, nil
	}
	return values, nil
}

func isTable(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// valueKind is the TOML type a flag's value takes in a config file.
type valueKind int

const (
	kindString valueKind = iota
	kindBool
	kindInt
	kindUint
	kindFloat
	kindDuration
)

// flagKind is the kind of value f takes, and whether it takes a list of
// them. Flag types it does not know take a string, as on the command line.
func flagKind(f cli.Flag) (kind valueKind, list bool) {
	switch f.(type) {
	case *cli.BoolFlag:
		return kindBool, false
	case *cli.IntFlag, *cli.Int64Flag:
		return kindInt, false
	case *cli.UintFlag, *cli.Uint64Flag:
		return kindUint, false
	case *cli.Float64Flag:
		return kindFloat, false
	case *cli.DurationFlag:
		return kindDuration, false
	case *cli.StringSliceFlag:
		return kindString, true
	case *cli.IntSliceFlag, *cli.Int64SliceFlag:
		return kindInt, true
	case *cli.UintSliceFlag, *cli.Uint64SliceFlag:
		return kindUint, true
	case *cli.Float64SliceFlag:
		return kindFloat, true
	}
	return kindString, false
}

// text turns v into the flag's command-line text. Its error is what v
// should have been, such as "an integer".
func (k valueKind) text(v any) (string, error) {
	switch k {
	case kindBool:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
		return "", errors.New("true or false")
	case kindInt:
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10), nil
		}
		return "", errors.New("an integer")
	case kindUint:
		if n, ok := v.(int64); ok && n >= 0 {
			return strconv.FormatInt(n, 10), nil
		}
		return "", errors.New("an integer of 0 or more")
	case kindFloat:
		switch n := v.(type) {
		case float64:
			return strconv.FormatFloat(n, 'g', -1, 64), nil
		case int64:
			return strconv.FormatInt(n, 10), nil
		}
		return "", errors.New("a number")
	case kindDuration:
		if s, ok := v.(string); ok {
			if _, err := time.ParseDuration(s); err == nil {
				return s, nil
			}
		}
		return "", errors.New(`a duration string such as "90s", "5m" or "1h30m"`)
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", errors.New("a string")
}

func (k valueKind) plural() string {
	switch k {
	case kindBool:
		return "booleans"
	case kindInt, kindUint:
		return "integers"
	case kindFloat:
		return "numbers"
	case kindDuration:
		return "durations"
	}
	return "strings"
}

func (k valueKind) sample() string {
	switch k {
	case kindBool:
		return "true, false"
	case kindInt, kindUint:
		return "1, 2"
	case kindFloat:
		return "1.5, 2"
	case kindDuration:
		return `"30s", "5m"`
	}
	return `"a", "b"`
}

// describe names a decoded TOML value for an error message.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// nearestName is the name closest to key in spelling, or "" when none is
// close enough to be a likely typo.
func nearestName(key string, names []string) string {
	norm := strings.ReplaceAll(strings.ToLower(key), "_", "-")
	best, bestDist := "", max(1, min(3, len(norm)/3))+1
	for _, n := range names {
		if d := editDistance(norm, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
