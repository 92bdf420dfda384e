package wire

import (
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// specField is one key of a packet body as the spec in doc.go lists it.
type specField struct {
	key, name string
	list      bool        // written name[]
	items     []specField // the keys of the items or of the nested map
}

// specPacket is one row of the spec's packet table.
type specPacket struct {
	id     ID
	name   string
	dir    Direction
	fields []specField
}

// packageDoc returns the package comment of doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatalf("parse doc.go: %v", err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	return f.Doc.Text()
}

var specRow = regexp.MustCompile(`^\t(\d+)\s+(\w+)\s+(\{.*)$`)

// parseSpecTable reads the packet table between "# Packet IDs" and the
// next heading.
func parseSpecTable(t *testing.T, doc string) []specPacket {
	t.Helper()
	_, sec, ok := strings.Cut(doc, "# Packet IDs\n")
	if !ok {
		t.Fatal("the package doc has no \"# Packet IDs\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n# ")
	var out []specPacket
	dir := Direction(255)
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case strings.HasPrefix(line, "Client to host"):
			dir = ClientToHost
		case strings.HasPrefix(line, "Host to client"):
			dir = HostToClient
		}
		m := specRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 255 {
			t.Fatalf("spec row %q: bad ID", line)
		}
		p := &specParser{s: m[3]}
		fields, err := p.object()
		if err != nil {
			t.Fatalf("spec row %q: %v", line, err)
		}
		out = append(out, specPacket{id: ID(n), name: m[2], dir: dir, fields: fields})
	}
	return out
}

// specParser reads the body notation {key:name, key:name[]{...}, ...}.
type specParser struct {
	s string
	i int
}

func (p *specParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *specParser) expect(c byte) error {
	p.skipSpace()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("want %q at %d of %q", c, p.i, p.s)
	}
	p.i++
	return nil
}

func (p *specParser) word() string {
	p.skipSpace()
	j := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || 'a' <= p.s[p.i]|0x20 && p.s[p.i]|0x20 <= 'z' || '0' <= p.s[p.i] && p.s[p.i] <= '9') {
		p.i++
	}
	return p.s[j:p.i]
}

func (p *specParser) object() ([]specField, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	var out []specField
	for {
		var f specField
		if f.key = p.word(); f.key == "" {
			return nil, fmt.Errorf("missing key at %d of %q", p.i, p.s)
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		if f.name = p.word(); f.name == "" {
			return nil, fmt.Errorf("missing field name at %d of %q", p.i, p.s)
		}
		if strings.HasPrefix(p.s[p.i:], "[]") {
			f.list = true
			p.i += 2
		}
		if p.i < len(p.s) && p.s[p.i] == '{' {
			items, err := p.object()
			if err != nil {
				return nil, err
			}
			f.items = items
		}
		out = append(out, f)
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return out, p.expect('}')
	}
}

// compareFields checks a struct type's codec keys against the spec's.
func compareFields(where string, rt reflect.Type, spec []specField) []string {
	var errs []string
	byKey := map[string]specField{}
	for _, f := range spec {
		if _, dup := byKey[f.key]; dup {
			errs = append(errs, fmt.Sprintf("%s: key %q listed twice", where, f.key))
		}
		byKey[f.key] = f
	}
	seen := map[string]bool{}
	for i := range rt.NumField() {
		sf := rt.Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("codec"), ",")
		if key == "" || key == "-" {
			errs = append(errs, fmt.Sprintf("%s.%s: no codec key", where, sf.Name))
			continue
		}
		seen[key] = true
		f, ok := byKey[key]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: key %q (%s) not in the spec", where, key, sf.Name))
			continue
		}
		if !strings.EqualFold(f.name, sf.Name) {
			errs = append(errs, fmt.Sprintf("%s: key %q is %s in the code, %s in the spec", where, key, sf.Name, f.name))
		}
		ft := sf.Type
		list := ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8
		if list != f.list {
			errs = append(errs, fmt.Sprintf("%s.%s: list %v in the code, %v in the spec", where, sf.Name, list, f.list))
		}
		if list {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			if f.items == nil {
				errs = append(errs, fmt.Sprintf("%s.%s: the spec lists no keys of its %s", where, sf.Name, ft))
				continue
			}
			errs = append(errs, compareFields(where+"."+sf.Name, ft, f.items)...)
		} else if f.items != nil {
			errs = append(errs, fmt.Sprintf("%s.%s: the spec lists keys of a %s", where, sf.Name, ft))
		}
	}
	for _, f := range spec {
		if !seen[f.key] {
			errs = append(errs, fmt.Sprintf("%s: the spec's key %q (%s) is not in the code", where, f.key, f.name))
		}
	}
	return errs
}

func TestSpecMatchesRegistry(t *testing.T) {
	spec := parseSpecTable(t, packageDoc(t))
	inSpec := map[ID]bool{}
	for _, sp := range spec {
		if inSpec[sp.id] {
			t.Errorf("spec lists %d twice", sp.id)
		}
		inSpec[sp.id] = true
		dir, ok := sp.id.Direction()
		if !ok {
			t.Errorf("spec lists %d %s, which is not registered", sp.id, sp.name)
			continue
		}
		if sp.name != sp.id.String() {
			t.Errorf("%d: named %s in the spec, %s in the registry", sp.id, sp.name, sp.id)
		}
		if sp.dir != dir {
			t.Errorf("%s: listed under %s in the spec, registered %s", sp.name, sp.dir, dir)
		}
		p, _ := New(sp.id)
		for _, e := range compareFields(sp.name, reflect.TypeOf(p).Elem(), sp.fields) {
			t.Error(e)
		}
	}
	for _, id := range IDs() {
		if !inSpec[id] {
			t.Errorf("%d %s is registered but not in the spec", id, id)
		}
	}
}

// TestSpecParserCatchesDrift checks that the comparison fails on the
// drifts it is for, so a passing TestSpecMatchesRegistry means something.
func TestSpecParserCatchesDrift(t *testing.T) {
	rt := reflect.TypeOf(ClientHashes{})
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{"{t:tick, w:world, m:maps[]{m:mapID, h:hash, p:parts[]}}", true},
		{"{t:tick, w:world}", false},                                        // key missing
		{"{t:tick, w:world, m:maps[]{m:mapID, h:hash}}", false},             // nested key missing
		{"{t:tick, x:world, m:maps[]{m:mapID, h:hash, p:parts[]}}", false},  // wrong key
		{"{t:tick, w:worlds, m:maps[]{m:mapID, h:hash, p:parts[]}}", false}, // wrong name
		{"{t:tick, w:world, m:maps{m:mapID, h:hash, p:parts[]}}", false},    // not a list
		{"{t:tick, w:world, m:maps[]{m:mapID, h:hash, p:parts[]}, z:extra}", false},
	} {
		p := &specParser{s: tc.body}
		fields, err := p.object()
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		errs := compareFields("Client_Hashes", rt, fields)
		if tc.ok != (len(errs) == 0) {
			t.Errorf("%s: errors %q, want ok=%v", tc.body, errs, tc.ok)
		}
	}
}

// TestSpecLimits checks every "Name (N KiB)" the package doc states
// against the constant.
func TestSpecLimits(t *testing.T) {
	consts := map[string]int{
		"DefaultMaxFrame":         DefaultMaxFrame,
		"MaxChunkData":            MaxChunkData,
		"MaxDetailBytes":          MaxDetailBytes,
		"MaxCommandPayload":       MaxCommandPayload,
		"MaxClientCommandPayload": MaxClientCommandPayload,
	}
	re := regexp.MustCompile(`(\w+)\s+\((\d+) (KiB|MiB)\)`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(packageDoc(t), -1) {
		v, ok := consts[m[1]]
		if !ok {
			t.Errorf("the doc states %s but the test does not know it", m[0])
			continue
		}
		n, _ := strconv.Atoi(m[2])
		unit := 1 << 10
		if m[3] == "MiB" {
			unit = 1 << 20
		}
		if n*unit != v {
			t.Errorf("the doc says %s; it is %d bytes", m[0], v)
		}
		found++
	}
	if found < 3 {
		t.Errorf("found %d stated limits, want the frame, chunk and detail limits at least", found)
	}
}

// TestSpecEnumerations checks the spec's list of each enumeration against
// the values the code names, in both directions: a value the code gains
// or the spec lists wrongly fails.
func TestSpecEnumerations(t *testing.T) {
	doc := strings.Join(strings.Fields(packageDoc(t)), " ")
	for _, tc := range []struct {
		label   string
		name    func(uint8) string
		unnamed string // the prefix String gives a value without a name
	}{
		{"Server_PlayerList action", func(v uint8) string { return PlayerListAction(v).String() }, "action("},
		{"player status", func(v uint8) string { return PlayerStatus(v).String() }, "status("},
		{"notice kind", func(v uint8) string { return NoticeKind(v).String() }, "notice("},
		{"Server_Desync state", func(v uint8) string { return DesyncState(v).String() }, "desync("},
	} {
		var parts []string
		for v := 0; v < 256; v++ {
			n := tc.name(uint8(v))
			if strings.HasPrefix(n, tc.unnamed) {
				break
			}
			parts = append(parts, fmt.Sprintf("%d %s", v, n))
		}
		want := tc.label + " " + strings.Join(parts, ", ") + ";"
		if !strings.Contains(doc, want) {
			t.Errorf("the spec does not say %q", want)
		}
	}
}
