//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall/js"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/modsync"
)

// contentJSON says where the page found the host's mods, for the page
// and the tests: Files and Bytes in all, how many were built in, kept in
// the browser from a visit before, and fetched from the host now.
type contentJSON struct {
	Shared       bool    `json:"shared"` // the host shares its content (else the built-in content is used)
	Mods         int     `json:"mods"`
	Files        int     `json:"files"`
	Bytes        int64   `json:"bytes"`
	BuiltIn      int     `json:"built_in"`
	Stored       int     `json:"stored"`
	Fetched      int     `json:"fetched"`
	FetchedBytes int64   `json:"fetched_bytes"`
	Refused      int     `json:"refused"`
	Skipped      int     `json:"skipped"` // files the page does not need (textures, sounds, …), not fetched
	SkippedBytes int64   `json:"skipped_bytes"`
	Kept         bool    `json:"kept"` // files are kept in Cache Storage for the next visit
	Ms           float64 `json:"ms"`
}

// browserLimits bound what the page takes from a host: every file it
// gets is held in the page's memory while the content loads.
var browserLimits = func() modsync.Limits {
	l := modsync.DefaultLimits
	l.MaxFileSize = 64 << 20
	l.MaxTotal = 512 << 20
	return l
}()

// contentCache is the Cache Storage cache the page keeps fetched mod
// files in, keyed /content/<sha256> (this page's own origin).
const contentCache = "lockhost-content"

// loadContent is the content to join with: the built-in content when
// the host shares none (it answers 404 for its manifest), else the mods
// of the host's manifest, from the built-in base, the browser's Cache
// Storage or the host (modsync.MemLoader), loaded with the same code as
// the join tool's. Only what loading the defs reads is got
// (modsync.LoadsDefs): the page draws no textures and plays no sounds.
func (c *client) loadContent(ctx context.Context, wsURL string) (*gamecontent.Bundle, error) {
	base, err := httpBase(wsURL)
	if err != nil {
		return nil, err
	}
	m, err := hostManifest(ctx, base)
	if err != nil || m == nil {
		if err == nil {
			c.update(func(s *state) { s.Content = &contentJSON{} })
			return gamecontent.Load(nil, "")
		}
		return nil, err
	}
	have, err := modsync.HashFS(colony.DefaultContentFS())
	if err != nil {
		return nil, fmt.Errorf("built-in content: %w", err)
	}
	store, kept := openStore(ctx)
	l := &modsync.MemLoader{Base: base, Store: store, Have: have, Limits: browserLimits, Pick: modsync.LoadsDefs,
		Progress: func(done, total int64) {
			c.update(func(s *state) { s.Phase, s.Done, s.Total = "content", uint64(done), uint64(total) })
		}}
	mods, st, err := l.Load(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("the host's mods: %w", err)
	}
	cj := &contentJSON{Shared: true, Mods: len(m.Mods), Files: st.Files, Bytes: st.Bytes, BuiltIn: st.Have, Stored: st.Stored,
		Fetched: st.Fetched, FetchedBytes: st.FetchedBytes, Refused: st.Refused, Skipped: st.Skipped, SkippedBytes: st.SkippedBytes, Kept: kept, Ms: float64(st.Elapsed.Microseconds()) / 1000}
	c.update(func(s *state) { s.Content = cj })
	c.say("info", "", fmt.Sprintf("content: %d files, %d bytes fetched (%d from cache, %d built in) for the host's %d mods; %d files the page does not need (%d bytes) left on the host",
		st.Fetched, st.FetchedBytes, st.Stored, st.Have, len(m.Mods), st.Skipped, st.SkippedBytes))
	if st.Unkept > 0 {
		c.say("notice", "", fmt.Sprintf("the browser would not keep %d of the host's files (its storage is full?), so the next visit fetches them again", st.Unkept))
	}
	if !kept {
		c.say("notice", "", "this page cannot keep the host's mods (no Cache Storage: the page is not served over HTTPS or from this machine), so the next visit fetches them again")
	}
	return gamecontent.LoadFS(mods, m.GameVersion)
}

// httpBase is the host's HTTP address for its WebSocket URL.
func httpBase(wsURL string) (string, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", fmt.Errorf("the host's address %q: %w", wsURL, err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("the host's address %q is not a WebSocket URL", wsURL)
	}
	return u.Scheme + "://" + u.Host, nil
}

// hostManifest is the host's content manifest, or nil when it shares
// none (404).
func hostManifest(ctx context.Context, base string) (*modsync.Manifest, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+modsync.ManifestPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the host's content manifest: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("the host's content manifest: the host answered %s", resp.Status)
	}
	lim := modsync.DefaultLimits
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(lim.MaxManifestBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("the host's content manifest: %w", err)
	}
	return modsync.Decode(b, lim)
}

// openStore is the page's Cache Storage cache, or a store in memory
// (kept false) where the page has none (not a secure context).
func openStore(ctx context.Context) (modsync.Store, bool) {
	caches := js.Global().Get("caches")
	if caches.IsUndefined() || caches.IsNull() {
		return modsync.MapStore{}, false
	}
	cache, err := await(ctx, caches.Call("open", contentCache))
	if err != nil {
		return modsync.MapStore{}, false
	}
	return cacheStore{cache: cache}, true
}

// cacheStore is a modsync.Store in Cache Storage.
type cacheStore struct{ cache js.Value }

func cacheKey(s modsync.Sum) string { return modsync.ContentPrefix + s.String() }

// Get is the stored file with hash s, or nil (MemLoader checks it).
func (cs cacheStore) Get(ctx context.Context, s modsync.Sum) ([]byte, error) {
	resp, err := await(ctx, cs.cache.Call("match", cacheKey(s)))
	if err != nil || resp.IsUndefined() || resp.IsNull() {
		return nil, err
	}
	buf, err := await(ctx, resp.Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	u8 := js.Global().Get("Uint8Array").New(buf)
	b := make([]byte, u8.Length())
	js.CopyBytesToGo(b, u8)
	return b, nil
}

// Put keeps b as the file with hash s.
func (cs cacheStore) Put(ctx context.Context, s modsync.Sum, b []byte) error {
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	headers := js.Global().Get("Object").New()
	headers.Set("Content-Type", "application/octet-stream")
	init := js.Global().Get("Object").New()
	init.Set("headers", headers)
	_, err := await(ctx, cs.cache.Call("put", cacheKey(s), js.Global().Get("Response").New(u8, init)))
	return err
}

// await waits for a JavaScript promise (on a goroutine that is not the
// page's callback). Cache Storage's promises settle promptly; ctx is
// for the callers' symmetry.
func await(_ context.Context, p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	done := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, a []js.Value) any { done <- result{v: arg(a, 0)}; return nil })
	fail := js.FuncOf(func(_ js.Value, a []js.Value) any {
		msg := "rejected"
		if e := arg(a, 0); e.Truthy() {
			msg = e.Call("toString").String()
		}
		done <- result{err: errors.New(strings.TrimSpace(msg))}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	p.Call("then", ok, fail)
	r := <-done // not cut short by ctx: the functions must live until the promise settles
	return r.v, r.err
}
