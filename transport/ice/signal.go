package ice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pion/webrtc/v4"
)

// Signaller carries the signalling blobs of one attempt between the
// joiner and the host, as opaque bytes: a coordinator's relay, or Pipe.
// Send delivers one blob whole; Recv returns the next blob from the peer,
// or an error when ctx ends or the carrier fails. A Signaller bounds what
// it reads itself; the blob it returns is checked against
// Config.MaxBlob before it is decoded.
type Signaller interface {
	Send(ctx context.Context, blob []byte) error
	Recv(ctx context.Context) ([]byte, error)
}

// The kinds of blob: the joiner sends an offer, the host an answer.
const (
	kindOffer  = "offer"
	kindAnswer = "answer"
)

// ErrBlob is wrapped by the error for a signalling blob that is refused:
// too large, not JSON, not a session description of the expected kind.
var ErrBlob = errors.New("bad signalling blob")

// blob is a signalling blob: a browser's RTCSessionDescriptionInit.
type blob struct {
	Type string `json:"type"`
	SDP  string `json:"sdp"`
}

// encodeBlob returns desc as a signalling blob.
func encodeBlob(desc webrtc.SessionDescription) ([]byte, error) {
	return json.Marshal(blob{Type: desc.Type.String(), SDP: desc.SDP})
}

// decodeBlob reads a signalling blob of the kind want, at most limit
// bytes, and checks that its description parses.
func decodeBlob(b []byte, want string, limit int) (webrtc.SessionDescription, error) {
	var none webrtc.SessionDescription
	if len(b) > limit {
		return none, fmt.Errorf("%w: %d bytes, more than %d", ErrBlob, len(b), limit)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v blob
	if err := dec.Decode(&v); err != nil {
		return none, fmt.Errorf("%w: %v", ErrBlob, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return none, fmt.Errorf("%w: data after the description", ErrBlob)
	}
	if v.Type != want {
		return none, fmt.Errorf("%w: a %q where an %q was due", ErrBlob, v.Type, want)
	}
	desc := webrtc.SessionDescription{Type: webrtc.NewSDPType(v.Type), SDP: v.SDP}
	parsed, err := desc.Unmarshal()
	if err != nil {
		return none, fmt.Errorf("%w: session description: %v", ErrBlob, err)
	}
	apps := 0
	for _, m := range parsed.MediaDescriptions {
		if m.MediaName.Media == "application" {
			apps++
		}
	}
	if apps != 1 {
		return none, fmt.Errorf("%w: %d data sections, want 1", ErrBlob, apps)
	}
	return desc, nil
}

// Pipe returns the two ends of an in-memory Signaller, for tests and for
// a joiner and a host in one process. A blob sent on one end is received
// on the other; Close on either end fails the other's Recv.
func Pipe() (*PipeEnd, *PipeEnd) {
	a2b, b2a := make(chan []byte, 4), make(chan []byte, 4)
	done := &pipeDone{ch: make(chan struct{})}
	return &PipeEnd{out: a2b, in: b2a, done: done}, &PipeEnd{out: b2a, in: a2b, done: done}
}

// PipeEnd is one end of a Pipe.
type PipeEnd struct {
	out  chan<- []byte
	in   <-chan []byte
	done *pipeDone
}

type pipeDone struct {
	once sync.Once
	ch   chan struct{}
}

// errPipeClosed is what a closed Pipe's ends return.
var errPipeClosed = errors.New("signalling pipe closed")

// Send hands a copy of b to the other end.
func (p *PipeEnd) Send(ctx context.Context, b []byte) error {
	select {
	case p.out <- bytes.Clone(b):
		return nil
	case <-p.done.ch:
		return errPipeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recv returns the next blob the other end sent.
func (p *PipeEnd) Recv(ctx context.Context) ([]byte, error) {
	select {
	case b := <-p.in:
		return b, nil
	case <-p.done.ch:
		return nil, errPipeClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close ends the pipe for both ends.
func (p *PipeEnd) Close() error {
	p.done.once.Do(func() { close(p.done.ch) })
	return nil
}
