package wire_test

import (
	"encoding/hex"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
)

// These tests hold the parts of the protocol specification that name
// values of packages above wire (the host's defaults, the payload's and
// the manifest's limits, the def statuses) to those packages.

func readSpecText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableRows returns the rows of the first markdown table after the
// heading line head, without header and separator.
func tableRows(t *testing.T, spec, head string) [][]string {
	t.Helper()
	_, sec, ok := strings.Cut(spec, "\n"+head+"\n")
	if !ok {
		t.Fatalf("the spec has no %q section", head)
	}
	var rows [][]string
	in := false
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !in || strings.Trim(cells[0], "-") == "" {
			in = true
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

var limitValue = regexp.MustCompile(`^(\d+)(?: (KiB|MiB) \((\d+)\))?$`)

// TestSpecLimits holds the spec's table of limits to the constants, in
// both directions for the wire package's.
func TestSpecLimits(t *testing.T) {
	consts := map[string]int{
		"DefaultMaxFrame":         wire.DefaultMaxFrame,
		"HandshakeMaxFrame":       host.Config{}.Defaults().Limits.HandshakeMaxFrame,
		"MaxChunkData":            wire.MaxChunkData,
		"MaxCommandPayload":       wire.MaxCommandPayload,
		"MaxClientCommandPayload": wire.MaxClientCommandPayload,
		"MaxDetailBytes":          wire.MaxDetailBytes,
		"MaxDatabases":            wire.MaxDatabases,
		"MaxDeclarationBytes":     wire.MaxDeclarationBytes,
		"MaxTypeNameBytes":        wire.MaxTypeNameBytes,
		"MaxNameBytes":            wire.MaxNameBytes,
		"MaxProofBytes":           wire.MaxProofBytes,
		"TokenSize":               wire.TokenSize,
		"MaxResumeBlobs":          wire.MaxResumeBlobs,
		"MaxSections":             wire.MaxSections,
		"MaxRecipe":               lockstep.MaxRecipe,
		"DefaultMaxRaw":           int(join.DefaultConfig().MaxRaw),
		"DefaultMaxRawTotal":      int(join.DefaultConfig().MaxRawTotal),
		"MaxHeldChecks":           wire.MaxHeldChecks,
		"MaxReplayBytes":          wire.MaxReplayBytes,
		"MaxReplayRaw":            wire.MaxReplayRaw,
		"MaxReplayCommands":       wire.MaxReplayCommands,
		"MaxHashMaps":             wire.MaxHashMaps,
		"MaxExplainTicks":         wire.MaxExplainTicks,
		"MaxExplainMaps":          wire.MaxExplainMaps,
		"MaxExplainChunk":         wire.MaxExplainChunk,
		"MaxExplainReply":         wire.MaxExplainReply,
		"MaxMapParts":             lockstep.MaxMapParts,
		"MaxLeaveWhyBytes":        wire.MaxLeaveWhyBytes,
		"MaxCodecs":               wire.MaxCodecs,
		"MaxPuzzleBits":           wire.MaxPuzzleBits,
		"MaxChatBytes":            wire.MaxChatBytes,
		"MaxMods":                 wire.MaxMods,
		"MaxModIDBytes":           wire.MaxModIDBytes,
		"MaxGameStringBytes":      wire.MaxGameStringBytes,
		"MaxPlayers":              wire.MaxPlayers,
		"MaxTickCommands":         wire.MaxTickCommands,
		"MaxTextBytes":            wire.MaxTextBytes,
		"MaxHeader":               snapshot.MaxHeader,
		"MaxHeaderMaps":           snapshot.MaxMaps,
		"MaxTickPayloadBytes":     lockstep.MaxBatchBytes,
		"MaxManifestSize":         defs.MaxManifestSize,
		"DefaultUploadLimit":      wire.DefaultUploadLimit,
		"MaxContentManifest":      wire.MaxContentManifest,
		"DefaultWorldRawLimit":    int(host.DefaultConfig().Relay.WorldRawLimit),
		"MaxTick":                 lockstep.MaxTick,
	}
	// Limits the spec states once for several packages.
	for _, same := range [][2]int{
		{snapshot.MaxCommandPayload, wire.MaxCommandPayload}, // a command in the header's c and in Server_Tick
		{snapshot.MaxMaps, wire.MaxHashMaps},                 // the maps a header lists and a hash report names
		{lockstep.MaxBatchCommands, wire.MaxTickCommands},    // the commands of one tick packet
	} {
		if same[0] != same[1] {
			t.Errorf("limits that the spec states as one differ: %d and %d", same[0], same[1])
		}
	}
	seen := map[string]bool{}
	for _, row := range tableRows(t, readSpecText(t), "## 3 Limits") {
		name, val := row[0], row[1]
		want, ok := consts[name]
		if !ok {
			t.Errorf("the spec states limit %s, which the test does not know", name)
			continue
		}
		seen[name] = true
		m := limitValue.FindStringSubmatch(val)
		if m == nil {
			t.Errorf("%s: value %q is not N or N KiB/MiB (bytes)", name, val)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if m[2] != "" {
			unit := 1 << 10
			if m[2] == "MiB" {
				unit = 1 << 20
			}
			bytes, _ := strconv.Atoi(m[3])
			if n*unit != bytes {
				t.Errorf("%s: %q does not add up", name, val)
			}
			n = bytes
		}
		if n != want {
			t.Errorf("the spec says %s is %s; it is %d", name, val, want)
		}
	}
	for name := range consts {
		if !seen[name] {
			t.Errorf("the spec's limits do not list %s", name)
		}
	}
}

// TestSpecDefStatuses holds the spec's def statuses to package defs.
func TestSpecDefStatuses(t *testing.T) {
	rows := tableRows(t, readSpecText(t), "### 5.2 Def statuses")
	for i, row := range rows {
		if row[0] != strconv.Itoa(i) {
			t.Errorf("row %d has value %s", i, row[0])
		}
		if got := defs.Status(i).String(); got != row[1] {
			t.Errorf("status %d is %s in the spec, %s in the code", i, row[1], got)
		}
	}
	if n := defs.Status(len(rows)).String(); !strings.HasPrefix(n, "status(") {
		t.Errorf("the code names status %d (%s), the spec does not", len(rows), n)
	}
}

// TestSpecALPN holds section 2's ALPN name to the one the TLS code offers.
func TestSpecALPN(t *testing.T) {
	if want := "ALPN `" + tlsid.Protocol + "`"; !strings.Contains(readSpecText(t), want) {
		t.Errorf("the spec does not say %s", want)
	}
}

// TestSpecIntegerForms holds section 1's integer rules: the forms the
// host writes for unsigned and signed fields, and a receiver taking any
// form whose value fits.
func TestSpecIntegerForms(t *testing.T) {
	enc := []struct {
		p    wire.Packet
		want string // the body's hex
	}{
		{&wire.ClientAck{Received: 600}, "81a172cd0258"},                             // uint64 600
		{&wire.ClientAck{Received: 127}, "81a1727f"},                                 // uint64 127: fixint
		{&wire.ClientAck{Received: 128}, "81a172cc80"},                               // uint64 128: cc
		{&wire.ServerDefsOK{PlayerID: 128}, "82a167a0a170d10080"},                    // int32 128: d1, every key written
		{&wire.ServerDefsOK{PlayerID: -33}, "82a167a0a170d0df"},                      // int32 -33: d0
		{&wire.ServerSession{GraceMs: 300000}, "84a16500a167d2000493e0a16bc0a17000"}, // int64 300000: d2
	}
	for _, tc := range enc {
		frame := wire.MustMarshal(tc.p)
		if got := hex.EncodeToString(frame[5:]); got != tc.want {
			t.Errorf("%s: body %s, want %s", tc.p.ID(), got, tc.want)
		}
	}
	dec := []struct {
		id   wire.ID
		body string
		ok   bool
	}{
		{wire.IDServerDefsOK, "81a170cd0100", true},      // int32 from cd
		{wire.IDServerNotice, "81a16bd005", true},        // uint8 from d0
		{wire.IDServerNotice, "81a16bcd0100", false},     // 256 in a uint8
		{wire.IDServerNotice, "81a16bff", false},         // -1 in a uint8
		{wire.IDServerDefsOK, "81a170ca3f800000", false}, // a float
		{wire.IDServerDefsOK, "82a170c0a167c0", true},    // nil for an int32 and a str
		{wire.IDServerResync, "82a166c0a16d9101", true},  // nil for a bool
		{wire.IDServerResync, "82a16601a16d9101", true},  // an integer for a bool
		{wire.IDServerDefsOK, "81a170c3", false},         // a bool for an int32
	}
	for _, tc := range dec {
		body, _ := hex.DecodeString(tc.body)
		if _, err := wire.Decode(tc.id, body); (err == nil) != tc.ok {
			t.Errorf("%s body %s: %v, want ok=%v", tc.id, tc.body, err, tc.ok)
		}
	}
}

// omitKeys lists the keys of rt, nested ones as paths ("h", "m[].o"),
// that the encoder leaves out at their zero value.
func omitKeys(rt reflect.Type, prefix string, out map[string]bool) {
	for i := range rt.NumField() {
		key, opts, _ := strings.Cut(rt.Field(i).Tag.Get("codec"), ",")
		if opts == "omitempty" {
			out[prefix+key] = true
		}
		ft, sep := rt.Field(i).Type, "."
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			ft, sep = ft.Elem(), "[]."
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			omitKeys(ft, prefix+key+sep, out)
		}
	}
}

var leftOutItem = regexp.MustCompile("^(?:`(\\w+)`|a (blob))'s ((?:`[^`]+`(?:, | and )?)+)$")

// TestSpecLeftOutKeys holds section 1's list of the keys not written at
// their zero value to the code's: every packet's, and a blob's in the
// world header; and the header's one key left out unless it applies.
func TestSpecLeftOutKeys(t *testing.T) {
	spec := readSpecText(t)
	const lead = "are not written at their zero value: "
	_, list, ok := strings.Cut(spec, lead)
	if !ok {
		t.Fatalf("section 1 has no %q", lead)
	}
	list, _, _ = strings.Cut(list, ".")
	specKeys := map[string]bool{}
	for _, item := range strings.Split(strings.Join(strings.Fields(list), " "), "; ") {
		m := leftOutItem.FindStringSubmatch(item)
		if m == nil {
			t.Errorf("section 1's list item %q is not \"`Packet`'s `k`, `k` and `k`\"", item)
			continue
		}
		for _, k := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[3], -1) {
			specKeys[m[1]+m[2]+" "+k[1]] = true
		}
	}
	code := map[string]bool{}
	for _, id := range wire.IDs() {
		p, _ := wire.New(id)
		keys := map[string]bool{}
		omitKeys(reflect.TypeOf(p).Elem(), "", keys)
		for k := range keys {
			code[id.String()+" "+k] = true
		}
	}
	blob := map[string]bool{}
	omitKeys(reflect.TypeOf(snapshot.BlobInfo{}), "", blob)
	for k := range blob {
		code["blob "+k] = true
	}
	for k := range code {
		if !specKeys[k] {
			t.Errorf("%s is left out at its zero value; section 1 does not list it", k)
		}
	}
	for k := range specKeys {
		if !code[k] {
			t.Errorf("section 1 lists %s as left out at its zero value; the code writes it", k)
		}
	}
	header := map[string]bool{}
	omitKeys(reflect.TypeOf(snapshot.Header{}), "", header)
	delete(header, "w.z")
	delete(header, "m[].b.z") // a blob's z
	if len(header) != 1 || !header["m[].o"] || !strings.Contains(strings.Join(strings.Fields(spec), " "), "The world header's `m[].o` is left out unless") {
		t.Errorf("the header's keys left out, blobs' aside, are %v; section 1 names `m[].o` alone", header)
	}
}
