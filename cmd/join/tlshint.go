package main

import (
	"context"
	"crypto/tls"
	"errors"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/status"
)

// tlsMismatch is a join that failed because one side speaks TLS and the
// other does not. It exits 4, as other failures to connect do.
type tlsMismatch struct {
	hostTLS bool
	err     error
}

func (e *tlsMismatch) Error() string {
	if e.hostTLS {
		return "the host speaks TLS; add --tls"
	}
	return "the host does not speak TLS; leave out --tls"
}

func (e *tlsMismatch) Unwrap() error { return e.err }

// tlsHint turns a join that failed for a TLS mismatch into a tlsMismatch.
// With --tls, a host that answers the TLS hello with plain bytes does not
// speak TLS. Without it, a host that hangs up before its first packet may
// want TLS (it cannot say so in a protocol the client does not speak):
// its status reply, asked for over UDP, settles it. Other errors pass
// through unchanged.
func tlsHint(ctx context.Context, err error, addr string, useTLS bool) error {
	var rh tls.RecordHeaderError
	if useTLS && errors.As(err, &rh) {
		return &tlsMismatch{hostTLS: false, err: err}
	}
	var re *join.RejectedError
	if useTLS || errors.As(err, &re) || ctx.Err() != nil || !isEOF(err) && !isReset(err) {
		return err
	}
	info, _, perr := status.Ping(ctx, addr, 2*time.Second)
	if perr == nil && info.TLS {
		return &tlsMismatch{hostTLS: true, err: err}
	}
	return err
}

// isReset reports a connection the other side reset.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET)
}
