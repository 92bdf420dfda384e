package coord

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/tlsid"
)

// URLEnv names the environment variable that gives the coordinator's URL
// to both tools when --coordinator does not.
const URLEnv = "LOCKHOST_COORDINATOR"

// Coordinator is a coordinator as its clients (hosts and joiners) reach
// it.
type Coordinator struct {
	base   *url.URL // without the fragment
	pin    string   // a fingerprint from the URL's fragment, or ""
	client *http.Client
	tls    *tls.Config
}

// ParseURL reads a coordinator's URL: https://HOST[:PORT][/PATH], or
// http:// (on a trusted network only). A fragment "#sha256:..." pins the
// coordinator's certificate by its fingerprint instead of checking its
// chain, for a coordinator with a self-signed certificate.
func ParseURL(s string) (*Coordinator, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("coordinator %q: give it as https://HOST[:PORT]", s)
	}
	c := &Coordinator{}
	if u.Fragment != "" {
		fp, err := tlsid.ParseFingerprint(u.Fragment)
		if err != nil || u.Scheme != "https" {
			return nil, fmt.Errorf("coordinator %q: after # give the certificate's sha256: fingerprint, with https", s)
		}
		c.pin = fp
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	c.base = u
	c.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	if c.pin != "" {
		pin := c.pin
		c.tls.InsecureSkipVerify = true // VerifyConnection pins the certificate
		c.tls.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || tlsid.FingerprintDER(cs.PeerCertificates[0].Raw) != pin {
				return fmt.Errorf("the coordinator's certificate is not %s", pin)
			}
			return nil
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = c.tls
	c.client = &http.Client{Transport: tr, Timeout: 15 * time.Second}
	return c, nil
}

// String is the coordinator's URL, with its pin if it has one.
func (c *Coordinator) String() string {
	if c.pin != "" {
		return c.base.String() + "#" + c.pin
	}
	return c.base.String()
}

// InviteLink is the browser link for code: the coordinator's page for it.
func (c *Coordinator) InviteLink(code Code) string { return c.base.String() + "/" + string(code) }

// endpoint is the URL of path on the coordinator, ws:// or wss:// when
// websocket is set.
func (c *Coordinator) endpoint(path string, websocket bool) string {
	u := *c.base
	u.Path += path
	if websocket {
		u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	}
	return u.String()
}

// dialWS opens a WebSocket to path.
func (c *Coordinator) dialWS(ctx context.Context, path string) (*websocket.Conn, error) {
	conn, resp, err := websocket.Dial(ctx, c.endpoint(path, true), c.wsOptions())
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", c.base.Host, withStatus(resp, err))
	}
	conn.SetReadLimit(MaxMessage)
	return conn, nil
}

// StatusError is a coordinator's refusal of a request, with its sentence.
type StatusError struct {
	Status   int
	Sentence string
}

func (e *StatusError) Error() string {
	if e.Sentence != "" {
		return e.Sentence
	}
	return fmt.Sprintf("HTTP status %d", e.Status)
}

// withStatus turns a failed request's response into a *StatusError
// carrying the coordinator's sentence, or returns err.
func withStatus(resp *http.Response, err error) error {
	if resp == nil || resp.StatusCode < 400 {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	var body struct {
		Error string `json:"error"`
	}
	json.Unmarshal(b, &body)
	if len(body.Error) > MaxReason {
		body.Error = body.Error[:MaxReason]
	}
	return &StatusError{Status: resp.StatusCode, Sentence: body.Error}
}

// Lookup asks the coordinator how the host registered as code may be
// reached.
func (c *Coordinator) Lookup(ctx context.Context, code Code) (LookupReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint(PathLookup+string(code), false), nil)
	if err != nil {
		return LookupReply{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return LookupReply{}, fmt.Errorf("coordinator %s: %w", c.base.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return LookupReply{}, fmt.Errorf("look up %s: %w", code, withStatus(resp, errors.New(resp.Status)))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
	if err != nil {
		return LookupReply{}, fmt.Errorf("coordinator %s: %w", c.base.Host, err)
	}
	r, err := DecodeLookupReply(b)
	if err == nil && r.Code != code {
		err = fmt.Errorf("the reply is for %s", r.Code)
	}
	if err != nil {
		return LookupReply{}, fmt.Errorf("coordinator %s: %w", c.base.Host, err)
	}
	return r, nil
}

// Report tells the coordinator how an attempt to reach code went, for its
// counters. Best effort: the error is for logs.
func (c *Coordinator) Report(ctx context.Context, code Code, outcome string, took time.Duration) error {
	b, _ := json.Marshal(Report{Code: code, Outcome: outcome, Millis: took.Milliseconds()})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(PathReport, false), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return withStatus(resp, errors.New(resp.Status))
	}
	return nil
}
