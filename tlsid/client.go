package tlsid

import (
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
)

// PinFlag is the Path of a MismatchError whose expected fingerprint came
// from the command line rather than a known hosts file.
const PinFlag = "--fingerprint"

// MismatchError reports a host whose certificate is not the one pinned for
// it.
type MismatchError struct {
	// Addr is the host's address as dialled.
	Addr string
	// Known is the pinned fingerprint.
	Known string
	// Got is the fingerprint of the certificate the host presented.
	Got string
	// Path is the known hosts file that holds Known, or PinFlag when Known
	// was given with --fingerprint.
	Path string
}

// Error says loudly what was expected, what was found, and what to do.
func (e *MismatchError) Error() string {
	if e.Path == PinFlag {
		return fmt.Sprintf("the host at %s presented certificate %s, but %s asks for %s: it may be an impostor, or the host made a new key; check the fingerprint with the host's owner before joining", e.Addr, e.Got, PinFlag, e.Known)
	}
	return fmt.Sprintf("the host at %s presented certificate %s, but %s pins %s: it may be an impostor, or the host made a new key; if you trust it, remove its line from %s or join with %s %s", e.Addr, e.Got, e.Path, e.Known, e.Path, PinFlag, e.Got)
}

// ClientConfig returns the TLS configuration a joiner dials addr with: TLS
// 1.3 only, offering "lockhost/2", and checking the host's certificate by
// its fingerprint instead of by chain and name.
//
// If pin is not empty (in any form ParseFingerprint accepts) the host must
// present exactly that certificate; a pin ParseFingerprint refuses fails
// every handshake, so callers should check it with ParseFingerprint first. Otherwise, if known is not nil and has
// an entry for addr, the host must present the certificate it names.
// Otherwise the certificate is trusted on first use. A mismatch fails the
// handshake with an error wrapping a *MismatchError.
//
// The file is never written during the handshake: after a successful
// handshake learned reports the fingerprint seen and whether it was new
// (neither pinned nor known), and the caller should call known.Remember
// with it once the join has succeeded. Before that learned returns "",
// false. The returned config may be used for more than one connection;
// learned reports the latest certificate accepted.
func ClientConfig(addr string, pin string, known *KnownHosts) (cfg *tls.Config, learned func() (fp string, isNew bool)) {
	var (
		mu     sync.Mutex
		seenFP string
		seenNw bool
	)
	verify := func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tlsid: the host presented no certificate")
		}
		got := FingerprintDER(cs.PeerCertificates[0].Raw)
		isNew := false
		switch {
		case pin != "":
			want, err := parseFingerprint(pin)
			if err != nil {
				return fmt.Errorf("tlsid: %s: %w", PinFlag, err)
			}
			if got != want {
				return &MismatchError{Addr: addr, Known: want, Got: got, Path: PinFlag}
			}
		case known != nil:
			want, ok, err := known.Lookup(addr)
			if err != nil {
				return err
			}
			if ok && got != want {
				return &MismatchError{Addr: addr, Known: want, Got: got, Path: known.Path}
			}
			isNew = !ok
		default:
			isNew = true
		}
		mu.Lock()
		seenFP, seenNw = got, isNew
		mu.Unlock()
		return nil
	}
	cfg = &tls.Config{
		MinVersion: tls.VersionTLS13,
		NextProtos: []string{Protocol},
		// The chain is not checked: VerifyConnection pins the certificate
		// itself. TLS 1.3 still proves the host holds its key.
		InsecureSkipVerify: true,
		VerifyConnection:   verify,
	}
	learned = func() (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		return seenFP, seenNw
	}
	return cfg, learned
}
