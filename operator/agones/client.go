package agones

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// PortEnv is the environment variable Agones sets, in the game server's
// container, to the SDK server's REST port.
const PortEnv = "AGONES_SDK_HTTP_PORT"

// DefaultPort is the SDK server's REST port when PortEnv is unset.
const DefaultPort = 9358

// PlayersList is the Agones List the host keeps its players' names in.
const PlayersList = "players"

// maxResponse bounds how much of one SDK answer is read: a GameServer is
// a few KiB.
const maxResponse = 1 << 20

// requestTimeout bounds one call to the SDK server.
const requestTimeout = 5 * time.Second

// Client calls the SDK server's REST gateway. Its methods are safe for
// concurrent use.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a Client of the SDK server on localhost at port.
func NewClient(port int) (*Client, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("agones: SDK port %d out of range", port)
	}
	return &Client{
		base: "http://127.0.0.1:" + strconv.Itoa(port),
		http: &http.Client{Timeout: requestTimeout},
	}, nil
}

// PortFromEnv returns the SDK port PortEnv names, and whether it is set.
// A set but malformed value is an error.
func PortFromEnv() (int, bool, error) {
	v, ok := os.LookupEnv(PortEnv)
	if !ok || v == "" {
		return 0, false, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, true, fmt.Errorf("agones: %s=%q is no port", PortEnv, v)
	}
	return p, true, nil
}

// Ready tells Agones the game server takes players.
func (c *Client) Ready(ctx context.Context) error { return c.post(ctx, "/ready", struct{}{}, nil) }

// Health sends one health ping.
func (c *Client) Health(ctx context.Context) error { return c.post(ctx, "/health", struct{}{}, nil) }

// Allocate marks the game server Allocated, so that a scale-down leaves
// it alone while it has players.
func (c *Client) Allocate(ctx context.Context) error {
	return c.post(ctx, "/allocate", struct{}{}, nil)
}

// Shutdown tells Agones the game server is done: its pod is deleted.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.post(ctx, "/shutdown", struct{}{}, nil)
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SetLabel sets the GameServer label agones.dev/sdk-KEY to value. Both
// must be valid Kubernetes label parts (value at most 63 characters).
func (c *Client) SetLabel(ctx context.Context, key, value string) error {
	return c.put(ctx, "/metadata/label", keyValue{key, value})
}

// SetAnnotation sets the GameServer annotation agones.dev/sdk-KEY.
func (c *Client) SetAnnotation(ctx context.Context, key, value string) error {
	return c.put(ctx, "/metadata/annotation", keyValue{key, value})
}

// List is an Agones List as the SDK answers it.
type List struct {
	Name     string   `json:"name"`
	Capacity int64    `json:"capacity,string"`
	Values   []string `json:"values"`
}

// AppendListValue adds value to the List name and returns the List.
func (c *Client) AppendListValue(ctx context.Context, name, value string) (List, error) {
	var l List
	err := c.post(ctx, listPath(name)+":addValue", map[string]string{"value": value}, &l)
	return l, err
}

// DeleteListValue removes value from the List name and returns the List.
func (c *Client) DeleteListValue(ctx context.Context, name, value string) (List, error) {
	var l List
	err := c.post(ctx, listPath(name)+":removeValue", map[string]string{"value": value}, &l)
	return l, err
}

// GetList returns the List name.
func (c *Client) GetList(ctx context.Context, name string) (List, error) {
	var l List
	err := c.do(ctx, http.MethodGet, listPath(name), nil, &l)
	return l, err
}

func listPath(name string) string { return "/v1beta1/lists/" + url.PathEscape(name) }

// GameServer is the part of the SDK's GameServer the host reads.
type GameServer struct {
	ObjectMeta struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"object_meta"`
	Status struct {
		// State is Scheduled, RequestReady, Ready, Allocated, Shutdown, ...
		State string `json:"state"`
		Lists map[string]struct {
			Capacity int64    `json:"capacity,string"`
			Values   []string `json:"values"`
		} `json:"lists"`
	} `json:"status"`
}

// GameServer returns the GameServer as the SDK server holds it.
func (c *Client) GameServer(ctx context.Context) (GameServer, error) {
	var gs GameServer
	err := c.do(ctx, http.MethodGet, "/gameserver", nil, &gs)
	return gs, err
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	return c.do(ctx, http.MethodPost, path, body, out)
}

func (c *Client) put(ctx context.Context, path string, body any) error {
	return c.do(ctx, http.MethodPut, path, body, nil)
}

// do sends one request and decodes the answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("agones %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("agones %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("agones %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("agones %s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxResponse {
		return fmt.Errorf("agones %s %s: answer over %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Message: sdkMessage(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("agones %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// StatusError is an SDK server's answer other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	// Message is the SDK server's message, if it gave one.
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("agones %s %s: HTTP %d: %s", e.Method, e.Path, e.Code, e.Message)
}

// sdkMessage is the message of an SDK error answer, or its start.
func sdkMessage(data []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &m) == nil && m.Message != "" {
		return m.Message
	}
	if len(data) > 200 {
		data = data[:200]
	}
	return string(data)
}

// IsStatus reports whether err is a StatusError.
func IsStatus(err error) bool {
	var se *StatusError
	return errors.As(err, &se)
}
