package coord

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// specSection is section 18 of docs/protocol.md, the coordinator's.
func specSection(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		tb.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## 18 The coordinator\n")
	if !ok {
		tb.Fatal("docs/protocol.md has no section 18 The coordinator")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	return sec
}

// specBlock is one JSON block of the section and the line that names it.
type specBlock struct {
	label string
	json  []byte
}

var jsonBlock = regexp.MustCompile("(?m)^([^\n]+):\n\n```json\n([^\n]*)\n```")

func specBlocks(tb testing.TB) []specBlock {
	var out []specBlock
	for _, m := range jsonBlock.FindAllStringSubmatch(specSection(tb), -1) {
		out = append(out, specBlock{label: m[1], json: []byte(m[2])})
	}
	return out
}

// specMessages are the section's JSON blocks, seeds for the fuzz targets.
func specMessages(tb testing.TB) [][]byte {
	var out [][]byte
	for _, b := range specBlocks(tb) {
		out = append(out, b.json)
	}
	return out
}

// TestSpecMessages: every JSON block of the section decodes and encodes
// back to its bytes exactly.
func TestSpecMessages(t *testing.T) {
	blocks := specBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("section 18 has %d JSON blocks, want at least 9", len(blocks))
	}
	types := map[string]bool{}
	for _, b := range blocks {
		var again []byte
		switch {
		case strings.HasPrefix(b.label, "Lookup reply"):
			r, err := DecodeLookupReply(b.json)
			if err != nil {
				t.Errorf("%s: %v", b.label, err)
				continue
			}
			again, _ = json.Marshal(r)
		case strings.HasSuffix(b.label, "report"):
			r, err := DecodeReport(b.json)
			if err != nil {
				t.Errorf("%s: %v", b.label, err)
				continue
			}
			again, _ = json.Marshal(r)
		default:
			m, err := DecodeMsg(b.json)
			if err != nil {
				t.Errorf("%s: %v", b.label, err)
				continue
			}
			types[m.Type] = true
			again = EncodeMsg(m)
		}
		if !bytes.Equal(again, b.json) {
			t.Errorf("%s: encodes to\n%s\nnot\n%s", b.label, again, b.json)
		}
	}
	for _, typ := range []string{TypeChallenge, TypeRegister, TypeRegistered, TypePing, TypePong, TypeSignal, TypeClose} {
		if !types[typ] {
			t.Errorf("section 18 shows no %s message", typ)
		}
	}
}

// TestSpecVectors recomputes the section's code and credential vectors
// and holds its numbers to the code's.
func TestSpecVectors(t *testing.T) {
	sec := specSection(t)
	m := regexp.MustCompile("Code vector: secret `([0-9a-f]+)` has public key `([0-9a-f]+)` and owns `([^`]+)`").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("no code vector")
	}
	secret, _ := hex.DecodeString(m[1])
	pub := KeyOf(secret).Public().(ed25519.PublicKey)
	if hex.EncodeToString(pub) != m[2] || string(CodeOfSecret(secret)) != m[3] {
		t.Errorf("code vector: key %x, code %s; the text %s, %s", pub, CodeOfSecret(secret), m[2], m[3])
	}
	// The register shown signs the challenge shown with the vector's key.
	var ch, reg Msg
	for _, b := range specBlocks(t) {
		if m, err := DecodeMsg(b.json); err == nil && m.Type == TypeChallenge {
			ch = m
		} else if err == nil && m.Type == TypeRegister {
			reg = m
		}
	}
	if got, err := VerifyRegister(reg, ch.Nonce); err != nil || !bytes.Equal(got, pub) {
		t.Errorf("the register shown does not sign the challenge shown with the vector's key: %v", err)
	}
	m = regexp.MustCompile("Credential vector: secret `([^`]+)`, username `(\\d+):([^`]+)` gives `([^`]+)`").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("no credential vector")
	}
	expiry, _ := strconv.ParseInt(m[2], 10, 64)
	if u, p := TURNCredentials([]byte(m[1]), m[3], time.Unix(expiry, 0)); u != m[2]+":"+m[3] || p != m[4] {
		t.Errorf("credential vector: %s %s, the text %s:%s %s", u, p, m[2], m[3], m[4])
	}
	for _, want := range []string{
		"at most **" + strconv.Itoa(MaxMessage) + "** bytes",
		"`" + Alphabet + "`",
		"**" + strconv.Itoa(CodeLen) + "** characters",
		"at most " + strconv.Itoa(MaxAddrs) + " addresses",
		"at most " + strconv.Itoa(MaxPlay) + " browser links",
		"blob of\nat most " + strconv.Itoa(MaxBlob) + " bytes",
		"at most " + strconv.Itoa(MaxTURNURLs) + " TURN URLs",
		"`" + SecretFile + "`",
		"`" + strings.TrimSuffix(SignContext, "\n") + "`, a newline (0a)",
		"fresh " + strconv.Itoa(NonceLen) + "-byte nonce",
		PathHost, PathLookup + "+CODE", PathSignal + "+CODE", PathReport,
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section 18 does not say %q", want)
		}
	}
	for _, o := range Outcomes {
		if !strings.Contains(sec, "`"+o+"`") {
			t.Errorf("section 18 does not name the outcome %s", o)
		}
	}
}
