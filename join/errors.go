package join

import (
	"fmt"

	"github.com/lockhost/lockhost/wire"
)

// RejectedError is the host refusing or ending the session with a reason.
type RejectedError struct {
	Reason   wire.Reason
	Message  string
	Statuses []uint8 // per declared def database, then Missing per undeclared host database, with ReasonDefs
	Detail   []byte  // host-supplied detail, with ReasonDefs
}

// Error is the host's sentence.
func (e *RejectedError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Reason.Sentence()
}

// ProtocolError is the host sending something this client cannot accept.
type ProtocolError struct{ Err error }

func (e *ProtocolError) Error() string { return fmt.Sprintf("host protocol error: %v", e.Err) }
func (e *ProtocolError) Unwrap() error { return e.Err }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Err: fmt.Errorf(format, args...)}
}
