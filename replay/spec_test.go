package replay

import (
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

// specFrames are the example frames of docs/protocol.md section 16, by
// the name that introduces each.
func specFrames(t *testing.T) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	i := strings.Index(spec, "\n## 16 Session recordings")
	if i < 0 {
		t.Fatal("docs/protocol.md has no section 16 Session recordings")
	}
	out := map[string][]byte{}
	re := regexp.MustCompile("(?s)Example (\\w+)\\b.*?```hex\\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(spec[i:], -1) {
		raw, err := hex.DecodeString(strings.Join(strings.Fields(m[2]), ""))
		if err != nil {
			t.Fatalf("example %s: %v", m[1], err)
		}
		out[m[1]] = raw
	}
	return out
}

// frameOf is a whole frame: its header and data.
func frameOf(k Kind, data []byte) []byte {
	h := frameHead(k, uint32(len(data)), xxhash.Sum64(data))
	return append(h[:], data...)
}

// TestSpecExamples holds the spec's example bytes to the code: the
// prefix, a checkpoint frame and an end frame, each decoded back.
func TestSpecExamples(t *testing.T) {
	ex := specFrames(t)
	cp := lockstep.Checkpoint{Tick: 600, World: 0x0123456789abcdef,
		Maps: []lockstep.MapCheckpoint{{ID: 0, Hash: 0x1111111111111111}, {ID: 3, Hash: 0x2222222222222222}}}
	for name, want := range map[string][]byte{
		"prefix":     append([]byte(Magic), 0, FormatVersion, 0, 0),
		"checkpoint": frameOf(KindCheckpoint, appendCheckpoint(nil, cp)),
		"end":        frameOf(KindEnd, appendEnd(nil, 660, EndStopped)),
	} {
		got, ok := ex[name]
		if !ok {
			t.Errorf("the spec has no example %s", name)
			continue
		}
		if hex.EncodeToString(got) != hex.EncodeToString(want) {
			t.Errorf("example %s:\nspec %x\ncode %x", name, got, want)
		}
	}
	if len(ex["checkpoint"]) < frameHeaderLen || len(ex["end"]) < frameHeaderLen {
		t.Fatal("the spec's examples are missing")
	}
	back, err := decodeCheckpoint(ex["checkpoint"][frameHeaderLen:])
	if err != nil || back.Tick != 600 || back.World != cp.World || len(back.Maps) != 2 || back.Maps[1].ID != 3 || back.Maps[1].Hash != cp.Maps[1].Hash {
		t.Fatalf("the spec's checkpoint decodes to %+v, %v", back, err)
	}
	if tick, why, err := decodeEnd(ex["end"][frameHeaderLen:]); err != nil || tick != 660 || why != EndStopped {
		t.Fatalf("the spec's end frame decodes to %d %d %v", tick, why, err)
	}
}

// TestSpecLimitsStated: the frame limits the spec's table states are the
// code's.
func TestSpecLimitsStated(t *testing.T) {
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	for _, want := range []string{
		"| 1 | header | 65536 |", "| 2 | start | 4294967295 |", "| 3 | commands | 16777216 |",
		"| 4 | checkpoint | 53276 |", "| 5 | end | 11 |",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("section 16's frame table lacks %q", want)
		}
	}
	for k, v := range map[Kind]uint64{KindHeader: 65536, KindStart: 4294967295, KindCommands: 16777216, KindCheckpoint: 53276, KindEnd: 11} {
		if maxFrame(k) != v {
			t.Errorf("%s frames: limit %d in the code, %d in this test's copy of the spec", k, maxFrame(k), v)
		}
	}
}
