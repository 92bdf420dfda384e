package coord

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Paths the coordinator serves.
const (
	PathHost   = "/v1/host"
	PathLookup = "/v1/lookup/"
	PathSignal = "/v1/signal/"
	PathReport = "/v1/report"
)

// QueueLen bounds each WebSocket's outgoing queue, on both sides.
const QueueLen = 64

// ReadMsg reads and decodes one message within d.
func ReadMsg(ctx context.Context, c *websocket.Conn, d time.Duration) (Msg, error) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	typ, b, err := c.Read(rctx)
	if err != nil {
		return Msg{}, err
	}
	if typ != websocket.MessageText {
		return Msg{}, errors.New("a binary message")
	}
	return DecodeMsg(b)
}

// WriteLoop sends the queue's messages on c until the queue closes or a
// write fails, then closes c with reason.
func WriteLoop(c *websocket.Conn, out <-chan Msg, done chan<- struct{}) {
	defer close(done)
	for m := range out {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Write(ctx, websocket.MessageText, EncodeMsg(m))
		cancel()
		if err == nil && m.Type == TypeClose && m.Attempt == "" {
			err = c.Close(websocket.StatusNormalClosure, CloseReason(m.Reason)) // the attempt's end
		}
		if err != nil {
			c.CloseNow()
			for range out {
			}
			return
		}
	}
}

// CloseReason trims a reason to what a WebSocket close frame carries.
func CloseReason(s string) string {
	if len(s) > 120 {
		s = s[:120]
	}
	return strings.ToValidUTF8(s, "")
}

// VerifyRegister checks that register m signs the challenge nonce, and
// returns the host's key.
func VerifyRegister(m Msg, nonce string) (ed25519.PublicKey, error) {
	key, err := decodeB64(m.Key, ed25519.PublicKeySize)
	if err != nil {
		return nil, err
	}
	sig, err := decodeB64(m.Sig, ed25519.SignatureSize)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(key, []byte(SignContext+nonce), sig) {
		return nil, errors.New("the signature does not sign this connection's challenge")
	}
	return key, nil
}

// Outcomes a joiner reports: the path that worked (lan, direct, or one
// of the ICE paths: punched, turn-udp, turn-tcp, turn-tls, and turn when
// only the host's side was relayed), or failed.
var Outcomes = []string{"lan", "direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn", "failed"}

// Report is what a joiner tells the coordinator after an attempt.
type Report struct {
	Code    Code   `json:"code"`
	Outcome string `json:"outcome"`
	// Millis is the time from the lookup to the connection (or to giving
	// up), in milliseconds.
	Millis int64 `json:"ms"`
}

// DecodeReport reads and checks a report.
func DecodeReport(b []byte) (Report, error) {
	var rep Report
	if err := strictJSON(b, &rep); err != nil {
		return Report{}, err
	}
	if _, err := ParseCode(string(rep.Code)); err != nil || !IsCode(string(rep.Code)) {
		return Report{}, fmt.Errorf("report: bad code %q", rep.Code)
	}
	ok := false
	for _, o := range Outcomes {
		ok = ok || rep.Outcome == o
	}
	if !ok || rep.Millis < 0 || rep.Millis > 3600_000 {
		return Report{}, fmt.Errorf("report: outcome %q or time %d ms out of range", rep.Outcome, rep.Millis)
	}
	return rep, nil
}
