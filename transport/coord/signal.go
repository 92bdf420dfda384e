package coord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/coder/websocket"
)

// Signal is one connection attempt's signalling channel between a joiner
// and a host, through the coordinator: opaque blobs (an ICE offer or
// answer, candidates) each way, in order. The joiner sends first. Recv
// returns ErrSignalClosed once the other side or the coordinator ends the
// attempt.
type Signal interface {
	// Send sends one blob of at most MaxBlob bytes.
	Send(ctx context.Context, blob []byte) error
	// Recv waits for the next blob from the other side.
	Recv(ctx context.Context) ([]byte, error)
	// Close ends the attempt.
	Close() error
}

// ErrSignalClosed is Recv's error once the attempt has ended.
var ErrSignalClosed = errors.New("coordinator: the signalling attempt ended")

// OpenSignal opens a signalling attempt to the host registered as code.
func (c *Coordinator) OpenSignal(ctx context.Context, code Code) (Signal, error) {
	conn, err := c.dialWS(ctx, PathSignal+string(code))
	if err != nil {
		return nil, err
	}
	return &wsSignal{c: conn}, nil
}

// wsSignal is the joiner's side of an attempt: its WebSocket.
type wsSignal struct {
	c  *websocket.Conn
	mu sync.Mutex // one writer at a time
}

func (s *wsSignal) Send(ctx context.Context, blob []byte) error {
	if len(blob) == 0 || len(blob) > MaxBlob {
		return fmt.Errorf("coordinator: a blob of %d bytes (1 to %d)", len(blob), MaxBlob)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.Write(ctx, websocket.MessageText, EncodeMsg(Msg{Type: TypeSignal, Blob: blob}))
}

func (s *wsSignal) Recv(ctx context.Context) ([]byte, error) {
	typ, b, err := s.c.Read(ctx)
	if err != nil {
		if websocket.CloseStatus(err) != -1 || errors.Is(err, io.EOF) {
			return nil, ErrSignalClosed
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("coordinator: a binary message")
	}
	m, err := DecodeMsg(b)
	if err != nil {
		return nil, err
	}
	switch m.Type {
	case TypeSignal:
		return m.Blob, nil
	case TypeClose:
		return nil, ErrSignalClosed
	}
	return nil, fmt.Errorf("coordinator: unexpected %q on a signalling attempt", m.Type)
}

func (s *wsSignal) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.Close(websocket.StatusNormalClosure, "")
}

// hostSignal is the host's side of an attempt: blobs come from its
// registration's reader, go out on its writer.
type hostSignal struct {
	id   string
	host *Host
	in   chan []byte // closed when the attempt ends
	once sync.Once
}

func (s *hostSignal) Send(ctx context.Context, blob []byte) error {
	if len(blob) == 0 || len(blob) > MaxBlob {
		return fmt.Errorf("coordinator: a blob of %d bytes (1 to %d)", len(blob), MaxBlob)
	}
	return s.host.send(ctx, Msg{Type: TypeSignal, Attempt: s.id, Blob: blob})
}

func (s *hostSignal) Recv(ctx context.Context) ([]byte, error) {
	select {
	case b, ok := <-s.in:
		if !ok {
			return nil, ErrSignalClosed
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *hostSignal) Close() error {
	s.host.endAttempt(s.id, true)
	return nil
}
