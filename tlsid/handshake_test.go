package tlsid

import (
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// host is a listening host for the handshake tests.
type host struct {
	ln   net.Listener
	cfg  *tls.Config
	errs chan error
}

func startHost(t *testing.T, cfg *tls.Config) *host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &host{ln: ln, cfg: cfg, errs: make(chan error, 1)}
	t.Cleanup(func() { ln.Close() })
	return h
}

func (h *host) addr() string { return h.ln.Addr().String() }

// dial accepts one connection on the host while the client dials it, and
// returns both sides' handshake errors and the client's connection state.
func (h *host) dial(t *testing.T, clientCfg *tls.Config) (state tls.ConnectionState, clientErr, serverErr error) {
	t.Helper()
	go func() {
		c, err := h.ln.Accept()
		if err != nil {
			h.errs <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		sc := tls.Server(c, h.cfg)
		if err := sc.Handshake(); err != nil {
			h.errs <- err
			return
		}
		var b [1]byte
		if _, err := sc.Read(b[:]); err != nil {
			h.errs <- &afterHandshakeError{err}
			return
		}
		h.errs <- nil
	}()
	c, err := net.Dial("tcp", h.addr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	cc := tls.Client(c, clientCfg)
	clientErr = cc.Handshake()
	if clientErr == nil {
		state = cc.ConnectionState()
		if _, err := cc.Write([]byte{1}); err != nil {
			t.Fatalf("client write after handshake: %v", err)
		}
	}
	cc.Close()
	serverErr = <-h.errs
	return state, clientErr, serverErr
}

// afterHandshakeError is a server failure after its handshake succeeded.
type afterHandshakeError struct{ err error }

func (e *afterHandshakeError) Error() string { return "after the handshake: " + e.err.Error() }

func TestHandshake(t *testing.T) {
	cert, _, err := LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fp, otherFP := Fingerprint(cert), Fingerprint(other)
	h := startHost(t, ServerConfig(cert))
	addr := h.addr()

	for _, c := range []struct {
		name     string
		pin      string
		noKnown  bool
		knownFP  string // remembered for addr before dialling
		tls12    bool   // the client speaks TLS 1.2 only
		wantNew  bool
		mismatch *MismatchError // want this failure; nil wants success
		fail     bool           // want some other failure
	}{
		{name: "first contact", wantNew: true},
		{name: "first contact without a file", noKnown: true, wantNew: true},
		{name: "known match", knownFP: fp},
		{name: "known mismatch", knownFP: otherFP, mismatch: &MismatchError{Addr: addr, Known: otherFP, Got: fp, Path: "KNOWN"}},
		{name: "fingerprint match", pin: strings.ToUpper(fp)},
		{name: "fingerprint match overrides known", pin: fp, knownFP: otherFP},
		{name: "fingerprint mismatch", pin: otherFP, mismatch: &MismatchError{Addr: addr, Known: otherFP, Got: fp, Path: PinFlag}},
		{name: "fingerprint mismatch overrides known", pin: otherFP, knownFP: fp, mismatch: &MismatchError{Addr: addr, Known: otherFP, Got: fp, Path: PinFlag}},
		{name: "invalid fingerprint", pin: "sha256:1234", fail: true},
		{name: "TLS 1.2 client", tls12: true, fail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var known *KnownHosts
			if !c.noKnown {
				known = &KnownHosts{Path: filepath.Join(t.TempDir(), "lockhost", "known_hosts")}
				if c.knownFP != "" {
					if err := known.Remember(addr, c.knownFP); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg, learned := ClientConfig(addr, c.pin, known)
			if c.tls12 {
				cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
			}
			state, clientErr, serverErr := h.dial(t, cfg)
			if c.mismatch == nil && !c.fail {
				if clientErr != nil || serverErr != nil {
					t.Fatalf("client: %v; server: %v", clientErr, serverErr)
				}
				if state.Version != tls.VersionTLS13 || state.NegotiatedProtocol != Protocol {
					t.Errorf("version %x, protocol %q", state.Version, state.NegotiatedProtocol)
				}
				gotFP, isNew := learned()
				if gotFP != fp || isNew != c.wantNew {
					t.Errorf("learned() = %q, %v; want %q, %v", gotFP, isNew, fp, c.wantNew)
				}
				if known != nil && isNew {
					// The file is not written during the handshake.
					if _, ok, err := known.Lookup(addr); ok || err != nil {
						t.Errorf("known hosts written during the handshake (ok %v, err %v)", ok, err)
					}
				}
				return
			}
			var after *afterHandshakeError
			if clientErr == nil || serverErr == nil || errors.As(serverErr, &after) {
				t.Fatalf("want both handshakes to fail; client: %v; server: %v", clientErr, serverErr)
			}
			if gotFP, isNew := learned(); gotFP != "" || isNew {
				t.Errorf("after a failed handshake learned() = %q, %v", gotFP, isNew)
			}
			var me *MismatchError
			isMismatch := errors.As(clientErr, &me)
			if c.mismatch == nil {
				if isMismatch {
					t.Errorf("unexpected mismatch: %v", clientErr)
				}
				return
			}
			if !isMismatch {
				t.Fatalf("client error %v (%T) is not a *MismatchError", clientErr, clientErr)
			}
			want := *c.mismatch
			if want.Path == "KNOWN" {
				want.Path = known.Path
			}
			if *me != want {
				t.Errorf("mismatch %+v, want %+v", *me, want)
			}
			msg := me.Error()
			for _, s := range []string{addr, fp, otherFP, want.Path} {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
		})
	}
}

func TestHandshakeTLS12Host(t *testing.T) {
	cert, _, err := LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	scfg := ServerConfig(cert)
	scfg.MinVersion, scfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	h := startHost(t, scfg)
	cfg, _ := ClientConfig(h.addr(), "", nil)
	_, clientErr, serverErr := h.dial(t, cfg)
	if clientErr == nil || serverErr == nil {
		t.Fatalf("TLS 1.2 host accepted; client: %v; server: %v", clientErr, serverErr)
	}
}

// TestTrustOnFirstUse follows a joiner through first contact, remembering,
// a second join, and the host making a new key.
func TestTrustOnFirstUse(t *testing.T) {
	hostDir := t.TempDir()
	cert, _, err := LoadOrCreate(hostDir)
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, ServerConfig(cert))
	addr := h.addr()
	known := &KnownHosts{Path: filepath.Join(t.TempDir(), "cfg", "lockhost", "known_hosts")}

	cfg, learned := ClientConfig(addr, "", known)
	if _, cErr, sErr := h.dial(t, cfg); cErr != nil || sErr != nil {
		t.Fatalf("first join: client %v, server %v", cErr, sErr)
	}
	fp, isNew := learned()
	if !isNew || fp != Fingerprint(cert) {
		t.Fatalf("first join learned %q, %v", fp, isNew)
	}
	if err := known.Remember(addr, fp); err != nil {
		t.Fatal(err)
	}

	cfg, learned = ClientConfig(addr, "", known)
	if _, cErr, sErr := h.dial(t, cfg); cErr != nil || sErr != nil {
		t.Fatalf("second join: client %v, server %v", cErr, sErr)
	}
	if got, isNew := learned(); got != fp || isNew {
		t.Fatalf("second join learned %q, %v", got, isNew)
	}

	// The host loses its identity and makes a new one.
	newCert, _, err := LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = ServerConfig(newCert)
	cfg, _ = ClientConfig(addr, "", known)
	_, cErr, _ := h.dial(t, cfg)
	var me *MismatchError
	if !errors.As(cErr, &me) {
		t.Fatalf("new host key: client error %v is not a mismatch", cErr)
	}
	if me.Known != fp || me.Got != Fingerprint(newCert) || me.Path != known.Path {
		t.Errorf("mismatch %+v", *me)
	}
	// Following the advice in the message lets the joiner in.
	cfg, learned = ClientConfig(addr, me.Got, known)
	if _, cErr, sErr := h.dial(t, cfg); cErr != nil || sErr != nil {
		t.Fatalf("join with --fingerprint: client %v, server %v", cErr, sErr)
	}
	if got, isNew := learned(); got != me.Got || isNew {
		t.Errorf("join with --fingerprint learned %q, %v", got, isNew)
	}
}
