package ice

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// specSection is the data channel's section of docs/protocol.md.
func specSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "### WebRTC data channel\n")
	if i < 0 {
		t.Fatal("docs/protocol.md has no section WebRTC data channel")
	}
	doc = doc[i:]
	if j := strings.Index(doc, "\n## "); j >= 0 {
		doc = doc[:j]
	}
	return strings.Join(strings.Fields(doc), " ")
}

// TestSpec: the spec's section states the channel and the limits the
// code uses, and a real offer is what it says a blob is: a JSON object of
// exactly type and sdp, with the max-message-size the section names.
func TestSpec(t *testing.T) {
	spec := specSection(t)
	for _, want := range []string{
		fmt.Sprintf("label **`%s`**", Label),
		fmt.Sprintf("stream id **%d**", ChannelID),
		fmt.Sprintf("protocol `%s`", Protocol),
		fmt.Sprintf(`createDataChannel("%s", {negotiated: true, id: %d, protocol: "%s"})`, Label, ChannelID, Protocol),
		fmt.Sprintf("at most **%d KiB**", MessageSize>>10),
		fmt.Sprintf("up to **%d KiB**", maxMessage>>10),
		fmt.Sprintf("a=max-message-size:%d", maxMessage),
		fmt.Sprintf("larger than **%d KiB**", DefaultMaxBlob>>10),
		fmt.Sprintf("after **%d s** by default", int(DefaultTimeout.Seconds())),
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("the spec's section does not say %q", want)
		}
	}
	js, hs := Pipe()
	defer hs.Close()
	go Dial(context.Background(), js, Config{LoopbackOnly: true, Timeout: 2 * time.Second})
	offer, err := hs.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]any
	if err := json.Unmarshal(offer, &members); err != nil {
		t.Fatal(err)
	}
	if len(members) != 2 || members["type"] != "offer" || members["sdp"] == nil {
		t.Fatalf("an offer's members: %v, want type \"offer\" and sdp", members)
	}
	sdp := members["sdp"].(string)
	for _, want := range []string{"m=application ", fmt.Sprintf("a=max-message-size:%d", maxMessage), "a=fingerprint:", "a=candidate:"} {
		if !strings.Contains(sdp, want) {
			t.Errorf("the offer's description has no %q:\n%s", want, sdp)
		}
	}
}
