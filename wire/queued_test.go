package wire

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

var queuedExample = regexp.MustCompile("(?m)^Queued example Server_Notice:\\s*\\n+```hex\\n([0-9a-f \\n]+)```")

// TestQueuedNoticeInSpec holds the spec's example of a queued notice
// (section 4, id 21) to the code's encoding: the place in line as `p`,
// after `k` and before `t`, with a text like the host's.
func TestQueuedNoticeInSpec(t *testing.T) {
	p := &ServerNotice{Kind: NoticeQueued, Place: 1,
		Text: "Waiting for an upload slot: the host sends the world to 2 joins at a time, and you are number 1 in line."}
	got := MustMarshal(p)
	m := queuedExample.FindStringSubmatch(readSpec(t))
	if m == nil {
		t.Fatalf("the spec has no queued example; it should read:\n%s", hexLines(got))
	}
	want, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the queued example should read:\n%s", hexLines(got))
	}
	dec, err := Decode(IDServerNotice, want[5:])
	if err != nil || *dec.(*ServerNotice) != *p {
		t.Errorf("the example decodes to %+v, %v", dec, err)
	}
	// Every other notice leaves p out: its bytes are those of before.
	if b := MustMarshal(&ServerNotice{Kind: NoticeJoined, Text: "ann joined."}); bytes.Contains(b, []byte{0xa1, 'p'}) {
		t.Errorf("a notice without a place writes p: %x", b)
	}
}
