package coord

import (
	"fmt"

	"github.com/lockhost/lockhost/tlsid"
)

// PinError is a lookup that contradicts the joiner's own pin for the
// code: the coordinator names another certificate, or none (which would
// strip TLS). Either the host made a new key or the coordinator lies.
type PinError struct {
	Code Code
	// Pinned is the joiner's fingerprint; Got the coordinator's ("": no
	// TLS).
	Pinned, Got string
}

func (e *PinError) Error() string {
	got := "no TLS at all"
	if e.Got != "" {
		got = "certificate " + e.Got
	}
	return fmt.Sprintf("the coordinator says %s has %s, but you pinned %s: the coordinator may be hostile, or the host made a new key; check the fingerprint with the host's owner before joining", e.Code, got, e.Pinned)
}

// Pin is the certificate fingerprint a joiner requires of the host r
// describes: its own pin (from the command line or its known hosts file)
// when it has one, which the coordinator's must match, else the one the
// coordinator registered ("" when the host speaks no TLS). A
// coordinator cannot make a joiner that pinned a host accept another.
func (r LookupReply) Pin(local string) (string, error) {
	if local == "" {
		return r.Fingerprint, nil
	}
	want, err := tlsid.ParseFingerprint(local)
	if err != nil {
		return "", err
	}
	if r.Fingerprint != want {
		return "", &PinError{Code: r.Code, Pinned: want, Got: r.Fingerprint}
	}
	return want, nil
}
