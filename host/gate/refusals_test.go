package gate

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

func TestRefusalLog(t *testing.T) {
	var buf syncbuf.Buffer
	l := NewRefusalLog(slog.New(slog.NewTextHandler(&buf, nil)), 10*time.Second)
	t0 := time.Unix(1000, 0)
	for i := range 1000 {
		l.Refused(t0.Add(time.Duration(i)*time.Millisecond), "192.0.2.1", "client refused", "RateLimited", "remote", "192.0.2.1:1")
	}
	l.Refused(t0, "192.0.2.1", "client refused", "BadPacket")
	l.Refused(t0, "192.0.2.2", "client refused", "Timeout", "remote", "192.0.2.2:1")
	if got := strings.Count(buf.String(), "msg=\"client refused\""); got != 2 {
		t.Fatalf("%d full lines for 1,002 refusals from two addresses in one interval, want 2:\n%s", got, buf.String())
	}
	l.Flush(t0.Add(5 * time.Second)) // the interval is not over
	if strings.Contains(buf.String(), "more clients refused") {
		t.Fatalf("summary before the interval ended:\n%s", buf.String())
	}
	l.Flush(t0.Add(10 * time.Second))
	out := buf.String()
	if strings.Count(out, "more clients refused") != 1 || !strings.Contains(out, "count=1000") ||
		!strings.Contains(out, "reason_RateLimited=999") || !strings.Contains(out, "reason_BadPacket=1") {
		t.Fatalf("want one summary of 1,000 quiet refusals by reason:\n%s", out)
	}
	if len(l.addrs) != 0 {
		t.Fatalf("flush kept %d addresses", len(l.addrs))
	}
	// A new interval starts with a full line again.
	l.Refused(t0.Add(11*time.Second), "192.0.2.1", "client refused", "RateLimited")
	if got := strings.Count(buf.String(), "msg=\"client refused\""); got != 3 {
		t.Fatalf("%d full lines, want 3 after a new interval began", got)
	}
}

// TestGoneIsNotARefusal: a joiner that left before admission is logged
// once per interval per address and never counted among the refusals.
func TestGoneIsNotARefusal(t *testing.T) {
	var buf syncbuf.Buffer
	l := NewRefusalLog(slog.New(slog.NewTextHandler(&buf, nil)), time.Minute)
	now := time.Now()
	for i := 0; i < 100; i++ {
		l.Gone(now, "127.0.0.1", "client left before admission")
	}
	l.Refused(now, "127.0.0.1", "client refused", "BadPacket")
	l.Flush(now.Add(2 * time.Minute))
	out := buf.String()
	if n := strings.Count(out, "client left before admission"); n != 1 {
		t.Fatalf("%d lines for 100 leaves in one interval, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "more clients refused") || !strings.Contains(out, "count=1 ") || strings.Contains(out, "Left") {
		t.Fatalf("the summary should count the one refusal and no leave:\n%s", out)
	}
}
