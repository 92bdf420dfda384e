package wire

import (
	"fmt"
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

var specRow = regexp.MustCompile(`^(\d+)\s+(\w+)\s+(\{.*)$`)

// specSection returns the text of the spec's section that starts with the
// heading line head, up to the next heading of the same or a higher level.
func specSection(t *testing.T, spec, head string) string {
	t.Helper()
	_, sec, ok := strings.Cut(spec, "\n"+head+"\n")
	if !ok {
		t.Fatalf("the spec has no %q section", head)
	}
	level := head[:strings.IndexByte(head, ' ')+1]
	for i := 0; i < len(sec); {
		j := strings.IndexByte(sec[i:], '\n')
		if j < 0 {
			break
		}
		line := sec[i+j+1:]
		if strings.HasPrefix(line, "#") {
			hashes := line[:strings.IndexFunc(line, func(r rune) bool { return r != '#' })]
			if len(hashes) < len(level) {
				return sec[:i+j+1]
			}
		}
		i += j + 1
	}
	return sec
}

// parseSpecTable reads the packet table of the spec's section 4.
func parseSpecTable(t *testing.T, spec string) []specPacket {
	t.Helper()
	sec := specSection(t, spec, "## 4 Packets")
	sec, _, _ = strings.Cut(sec, "\n### ")
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
	if len(out) == 0 {
		t.Fatal("the spec's packet table has no rows")
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
		if list || ft.Kind() == reflect.Pointer {
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
	spec := parseSpecTable(t, readSpec(t))
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
