package wire

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdTable returns the rows of the first markdown table in sec, without
// its header and separator rows, each as trimmed cells.
func mdTable(sec string) [][]string {
	var rows [][]string
	in := false
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		if !in {
			in = true
			continue // the header
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if strings.HasPrefix(cells[0], "---") || strings.HasPrefix(cells[0], "-") && strings.Trim(cells[0], "-") == "" {
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

// msgpackType names a Go field type as the spec's key tables do.
func msgpackType(rt reflect.Type) string {
	switch rt.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "str"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rt.Kind().String()
	case reflect.Slice:
		if rt.Elem().Kind() == reflect.Uint8 {
			return "bin" // msgpack writes a byte slice as bin
		}
		return "array of " + msgpackType(rt.Elem())
	case reflect.Struct:
		return "map"
	case reflect.Pointer:
		if rt.Elem().Kind() == reflect.Struct {
			return "map" // an optional nested map: nil is left out
		}
	}
	return rt.String()
}

// keyTypes lists every key path of a body type with its msgpack type:
// "d", "d[].t", "w.s", ...
func keyTypes(rt reflect.Type, prefix string, out map[string]string) {
	for i := range rt.NumField() {
		sf := rt.Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("codec"), ",")
		path := prefix + key
		out[path] = msgpackType(sf.Type)
		ft := sf.Type
		sep := "."
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			ft, sep = ft.Elem(), "[]."
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			keyTypes(ft, path+sep, out)
		}
	}
}

// specKeyTable reads a key table ("| `key` | field | type | ... |") into
// key path -> type.
func specKeyTable(t *testing.T, where, sec string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, row := range mdTable(sec) {
		if len(row) < 3 {
			t.Errorf("%s: row %q has fewer than 3 cells", where, row)
			continue
		}
		key := strings.Trim(row[0], "`")
		if _, dup := out[key]; dup {
			t.Errorf("%s: key %s listed twice", where, key)
		}
		out[key] = row[2]
	}
	return out
}

// compareKeyTypes reports the differences between the code's keys and
// types and the spec's.
func compareKeyTypes(where string, code, spec map[string]string) []string {
	var errs []string
	for k, ty := range code {
		st, ok := spec[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s: key %s (%s) is not in the spec's table", where, k, ty))
		case st != ty:
			errs = append(errs, fmt.Sprintf("%s: key %s is %s in the code, %s in the spec", where, k, ty, st))
		}
	}
	for k := range spec {
		if _, ok := code[k]; !ok {
			errs = append(errs, fmt.Sprintf("%s: the spec's key %s is not in the code", where, k))
		}
	}
	return errs
}

// TestSpecKeyTypes holds each packet's key table (every key, nested keys
// included, with its msgpack type) to the packet's Go type.
func TestSpecKeyTypes(t *testing.T) {
	spec := readSpec(t)
	for _, id := range IDs() {
		sec := specSection(t, spec, fmt.Sprintf("### %d %s", id, id))
		p, _ := New(id)
		code := map[string]string{}
		keyTypes(reflect.TypeOf(p).Elem(), "", code)
		for _, e := range compareKeyTypes(id.String(), code, specKeyTable(t, id.String(), sec)) {
			t.Error(e)
		}
	}
}

// TestSpecKeyTypesCatchDrift checks that the comparison fails on the
// drifts it is for.
func TestSpecKeyTypesCatchDrift(t *testing.T) {
	code := map[string]string{}
	keyTypes(reflect.TypeOf(ClientHashes{}), "", code)
	good := "| Key | Field | Type | Limit |\n|---|---|---|---|\n| `t` | tick | uint64 | |\n| `w` | world | uint64 | |\n" +
		"| `m` | maps | array of map | |\n| `m[].m` | mapID | int32 | |\n| `m[].h` | hash | uint64 | |\n| `m[].p` | parts | array of uint64 | |\n"
	if errs := compareKeyTypes("ok", code, specKeyTable(t, "ok", good)); len(errs) != 0 {
		t.Fatalf("the right table fails: %q", errs)
	}
	for _, bad := range []string{
		strings.Replace(good, "| `t` | tick | uint64", "| `t` | tick | int64", 1),        // wrong type
		strings.Replace(good, "| `m[].p` | parts | array of uint64 | |\n", "", 1),        // key missing
		strings.Replace(good, "array of uint64", "bin", 1),                               // bin for an array
		good + "| `x` | extra | bool | |\n",                                              // key not in the code
		strings.Replace(good, "| `m[].h` | hash | uint64", "| `m.h` | hash | uint64", 1), // wrong path
	} {
		if errs := compareKeyTypes("bad", code, specKeyTable(t, "bad", bad)); len(errs) == 0 {
			t.Errorf("a wrong table passes:\n%s", bad)
		}
	}
}

// TestSpecEnumerations holds each enumeration table of the spec's section
// 5 to the names the code gives each value, in both directions.
func TestSpecEnumerations(t *testing.T) {
	spec := readSpec(t)
	for _, tc := range []struct {
		head    string
		name    func(uint8) string
		unnamed string // the prefix String gives a value without a name
	}{
		{"### 5.1 Disconnect reasons", func(v uint8) string { return Reason(v).String() }, "Reason("},
		{"### 5.3 Player-list actions", func(v uint8) string { return PlayerListAction(v).String() }, "action("},
		{"### 5.4 Player statuses", func(v uint8) string { return PlayerStatus(v).String() }, "status("},
		{"### 5.5 Notice kinds", func(v uint8) string { return NoticeKind(v).String() }, "notice("},
		{"### 5.6 Desync states", func(v uint8) string { return DesyncState(v).String() }, "desync("},
		{"### 5.7 Upload kinds", func(v uint8) string { return UploadKind(v).String() }, "UploadKind("},
		{"### 5.8 Upload results", func(v uint8) string { return UploadResult(v).String() }, "UploadResult("},
		{"### 5.9 Rejoin results", func(v uint8) string { return RejoinResult(v).String() }, "RejoinResult("},
	} {
		rows := mdTable(specSection(t, spec, tc.head))
		for i, row := range rows {
			v, err := strconv.Atoi(row[0])
			if err != nil || v != i {
				t.Errorf("%s: row %d has value %q", tc.head, i, row[0])
				continue
			}
			if got := tc.name(uint8(v)); got != row[1] {
				t.Errorf("%s: %d is %s in the spec, %s in the code", tc.head, v, row[1], got)
			}
		}
		if n := tc.name(uint8(len(rows))); !strings.HasPrefix(n, tc.unnamed) {
			t.Errorf("%s: the code names %d (%s), the spec does not", tc.head, len(rows), n)
		}
	}
	for v, row := range mdTable(specSection(t, spec, "### 5.1 Disconnect reasons")) {
		if row[2] != Reason(v).Sentence() {
			t.Errorf("reason %d: the spec says %q, the code %q", v, row[2], Reason(v).Sentence())
		}
	}
	for v, row := range mdTable(specSection(t, spec, "### 5.9 Rejoin results")) {
		if row[2] != RejoinResult(v).Sentence() {
			t.Errorf("rejoin result %d: the spec says %q, the code %q", v, row[2], RejoinResult(v).Sentence())
		}
	}
}

// TestSpecProtocolVersion holds every statement of the protocol version
// in the spec to ProtocolVersion and MinProtocolVersion.
func TestSpecProtocolVersion(t *testing.T) {
	spec := readSpec(t)
	want := strconv.Itoa(int(ProtocolVersion))
	oldest := strconv.Itoa(int(MinProtocolVersion))
	if m := regexp.MustCompile("\\| `v` \\| protocol \\| uint32 \\| (\\d+) or (\\d+) \\|").FindStringSubmatch(spec); m == nil {
		t.Error("the spec's Client_Protocol table does not give the versions a host admits")
	} else if m[1] != oldest || m[2] != want {
		t.Errorf("the spec says %q; the host admits %s to %s", m[0], oldest, want)
	}
	if m := regexp.MustCompile("admits clients of\\s+version (\\d+) \\(`wire.MinProtocolVersion`\\)").FindStringSubmatch(spec); m == nil || m[1] != oldest {
		t.Errorf("the spec does not say the oldest version admitted is %s (found %q)", oldest, m)
	}
	for _, re := range []string{
		`Protocol version: \*\*(\d+)\*\*`,
		`protocol    uint32, the TCP protocol version \((\d+)\)`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(spec)
		if m == nil {
			t.Errorf("the spec has no %s", re)
			continue
		}
		if m[1] != want {
			t.Errorf("the spec says %q; the version is %s", m[0], want)
		}
	}
}
