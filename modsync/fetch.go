package modsync

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
	"github.com/klauspost/compress/gzip"
)

// Source gives a file's bytes to a Fetcher, from a host's HTTP listener
// (HTTPSource) or the session connection (join.ContentConn). Get returns the
// bytes of f from offset from on, or from its start: it says which. The
// Fetcher bounds and checks what the body holds; a source checks what
// its carrier says (statuses, announced lengths).
type Source interface {
	Get(ctx context.Context, f File, from int64) (body io.ReadCloser, start int64, err error)
}

// Fetcher downloads the files a joiner lacks into a Cache.
type Fetcher struct {
	// Source gives the files; nil means an HTTPSource of Client and Base.
	Source Source
	// Client makes HTTP requests; nil means a client that asks for no
	// compression (a file's bytes are hashed as they arrive).
	Client *http.Client
	// Base is the host's HTTP address, "http://host:port" (or a static
	// mirror's), when Source is nil.
	Base   string
	Cache  *Cache
	Limits Limits
	// Local maps hashes to files the player already has (in its own mod
	// folders): those are copied into the cache, checked, not fetched.
	Local map[Sum]string
}

// Stats say where a fetch found its files.
type Stats struct {
	Files        int   // distinct files needed
	Cached       int   // already in the cache
	CachedBytes  int64 // their size
	Local        int   // copied from the player's own folders
	LocalBytes   int64 // their size
	Fetched      int   // downloaded
	FetchedBytes int64 // bytes received for them on the wire (compressed or not), retries included
	FileBytes    int64 // bytes of those files written, retries included
	Resumed      int64 // bytes of partial downloads that were kept
	Refused      int   // downloads refused for a wrong hash, then fetched again
}

// Need lists the distinct files (by hash, in manifest order) of the mods
// pick selects; held-back mods list none.
func Need(m *Manifest, pick func(*Mod) bool) []File {
	seen := map[Sum]bool{}
	var out []File
	for i := range m.Mods {
		d := &m.Mods[i]
		if d.Held || (pick != nil && !pick(d)) {
			continue
		}
		for _, f := range d.Files {
			if !seen[f.Hash] {
				seen[f.Hash] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// checkCaps refuses a list of files over the fetcher's limits before
// anything is fetched.
func (f *Fetcher) checkCaps(files []File) error {
	if len(files) > f.Limits.MaxFiles {
		return fmt.Errorf("fetch: %d files: %w (%d)", len(files), ErrLimit, f.Limits.MaxFiles)
	}
	var total int64
	for _, x := range files {
		if x.Size < 0 || x.Size > f.Limits.MaxFileSize {
			return fmt.Errorf("fetch: %s of %d bytes: %w (%d)", x.Path, x.Size, ErrLimit, f.Limits.MaxFileSize)
		}
		if total += x.Size; total > f.Limits.MaxTotal {
			return fmt.Errorf("fetch: more than %d bytes: %w", f.Limits.MaxTotal, ErrLimit)
		}
	}
	return nil
}

// Fetch puts every file of files into the cache: those it holds are
// kept, those the player has are copied, the others downloaded, resuming
// a partial download with Range. Every file's size and SHA-256 are
// checked before it enters the cache; a file with a wrong hash is
// refused and fetched once more from its start. On an error, what was
// downloaded stays in the cache's partial folder for the next Fetch.
func (f *Fetcher) Fetch(ctx context.Context, files []File) (Stats, error) {
	st := Stats{Files: len(files)}
	if err := f.checkCaps(files); err != nil {
		return st, err
	}
	for _, x := range files {
		if f.Cache.Has(x.Hash, x.Size) {
			st.Cached, st.CachedBytes = st.Cached+1, st.CachedBytes+x.Size
			continue
		}
		if p, ok := f.Local[x.Hash]; ok && f.copyLocal(x, p) == nil {
			st.Local, st.LocalBytes = st.Local+1, st.LocalBytes+x.Size
			continue
		}
		err := f.fetchOne(ctx, x, &st)
		if errors.Is(err, ErrHashMismatch) {
			st.Refused++
			err = f.fetchOne(ctx, x, &st)
		}
		if err != nil {
			return st, fmt.Errorf("fetch %s (%s): %w", x.Path, x.Hash, err)
		}
		st.Fetched++
	}
	return st, nil
}

// copyLocal inserts the player's own copy of a file, if its hash is right.
func (f *Fetcher) copyLocal(x File, p string) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	return f.Cache.Insert(x.Hash, x.Size, in)
}

// defaultClient asks for no compression and keeps its connections for
// the next file.
var defaultClient = &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 2}}

func (f *Fetcher) source() Source {
	if f.Source != nil {
		return f.Source
	}
	return HTTPSource{Client: f.Client, Base: f.Base}
}

// ErrBusy is the error of a file another process is fetching into the
// same cache; it can be fetched again once that is done.
var ErrBusy = errors.New("being fetched into this cache by another process")

// fetchOne downloads one file into its partial file, resuming it, and
// commits it to the cache. A wrong hash removes the partial file. The
// partial file is locked (an operating-system lock, released when the
// process ends) so that two joiners sharing a cache never write it both.
func (f *Fetcher) fetchOne(ctx context.Context, x File, st *Stats) error {
	lock := flock.New(f.Cache.partialPath(x.Hash) + ".lock")
	locked, err := lock.TryLock()
	if err != nil {
		return err
	}
	if !locked {
		return ErrBusy
	}
	defer lock.Unlock()
	if f.Cache.Has(x.Hash, x.Size) {
		return nil
	}
	part, err := os.OpenFile(f.Cache.partialPath(x.Hash), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	info, err := part.Stat()
	if err != nil {
		part.Close()
		return err
	}
	have := info.Size()
	if have > x.Size {
		have = 0
	}
	if have > 0 {
		st.Resumed += have
	}
	if have < x.Size {
		n, wire, err := f.download(ctx, x, part, have)
		st.FetchedBytes += wire
		st.FileBytes += n
		if err != nil {
			part.Close()
			return err
		}
	}
	if err := f.Cache.commit(part, x.Hash, x.Size); err != nil {
		os.Remove(part.Name())
		return err
	}
	return nil
}

// download gets the file from byte have on and appends what arrives to
// part (which it first cuts to what is kept). It returns the file bytes
// written and the bytes received on the wire (the same unless the
// source compressed them: see WireCounter).
func (f *Fetcher) download(ctx context.Context, x File, part *os.File, have int64) (int64, int64, error) {
	body, from, err := f.source().Get(ctx, x, have)
	if err != nil {
		return 0, 0, err
	}
	defer body.Close()
	if from != 0 && from != have {
		return 0, 0, fmt.Errorf("the source sent the file from byte %d, asked from %d", from, have)
	}
	if err := part.Truncate(from); err != nil {
		return 0, 0, err
	}
	if _, err := part.Seek(from, io.SeekStart); err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(part, io.LimitReader(body, x.Size-from+1))
	if err == nil && from+n > x.Size {
		err = fmt.Errorf("the host sent more than the %d bytes the manifest declares: %w", x.Size, ErrLimit)
		part.Truncate(0)
	} else if err == nil && from+n < x.Size {
		err = fmt.Errorf("the host sent %d of %d bytes: %w", from+n, x.Size, io.ErrUnexpectedEOF)
	}
	wire := n
	if wc, ok := body.(WireCounter); ok {
		wire = wc.WireBytes()
	}
	return n, wire, err
}

// WireCounter is a body a Source returns that was decompressed: it says
// how many bytes it read on the wire.
type WireCounter interface {
	WireBytes() int64
}

// HTTPSource gets files with GET /content/<sha256> (section 17.3 of the
// protocol), resuming with Range and If-Range.
type HTTPSource struct {
	// Client makes the requests; nil means a client that asks for no
	// compression and keeps its connections.
	Client *http.Client
	// Base is the host's address, "http://host:port".
	Base string
}

// Get implements Source.
func (s HTTPSource) Get(ctx context.Context, x File, from int64) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL(s.Base, x.Hash), nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if from > 0 {
		req.Header.Set("Accept-Encoding", "identity")
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
		req.Header.Set("If-Range", `"`+x.Hash.String()+`"`)
	}
	client := s.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	start, gz, err := checkResponse(resp, x.Size, from)
	if err != nil {
		resp.Body.Close()
		return nil, 0, err
	}
	if !gz {
		return resp.Body, start, nil
	}
	raw := &boundedReader{r: resp.Body, left: maxCompressed(x.Size)}
	zr, err := gzip.NewReader(raw)
	if err != nil {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("the host's gzip stream: %w", err)
	}
	return &gunzipBody{Reader: zr, raw: raw, body: resp.Body}, 0, nil
}

// maxCompressed is the most a gzip stream of a file of size bytes may
// take: deflate's worst case (stored blocks) is far below it. A stream
// of blocks that decompress to nothing stops there.
func maxCompressed(size int64) int64 { return size + size/64 + 4096 }

// boundedReader reads at most left bytes, then fails with ErrLimit.
type boundedReader struct {
	r    io.Reader
	left int64
	read int64
}

// Read implements io.Reader.
func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("compressed stream longer than the file could need: %w", ErrLimit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	b.read += int64(n)
	return n, err
}

// gunzipBody is a decompressed HTTP body.
type gunzipBody struct {
	io.Reader
	raw  *boundedReader
	body io.Closer
}

func (g *gunzipBody) Close() error     { return g.body.Close() }
func (g *gunzipBody) WireBytes() int64 { return g.raw.read }

// checkResponse checks the status and lengths of a file's response and
// returns the offset its body starts at (0 for 200, have for 206) and
// whether it is gzip-compressed (asked only for a whole file).
func checkResponse(resp *http.Response, size, have int64) (int64, bool, error) {
	gz := false
	switch enc := resp.Header.Get("Content-Encoding"); {
	case enc == "gzip" && have == 0 && resp.StatusCode == http.StatusOK:
		return 0, true, nil
	case enc != "" && enc != "identity":
		return 0, gz, fmt.Errorf("the host sent the file with Content-Encoding %q, which was not asked for", enc)
	}
	from := int64(0)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusPartialContent:
		want := fmt.Sprintf("bytes %d-%d/%d", have, size-1, size)
		if have == 0 || resp.Header.Get("Content-Range") != want {
			return 0, gz, fmt.Errorf("the host answered Range bytes=%d- with Content-Range %q, want %q", have, resp.Header.Get("Content-Range"), want)
		}
		from = have
	default:
		return 0, gz, fmt.Errorf("the host answered %s", resp.Status)
	}
	if resp.ContentLength >= 0 && resp.ContentLength != size-from {
		return 0, gz, fmt.Errorf("the host announced %s bytes, the manifest %d: %w", strconv.FormatInt(resp.ContentLength, 10), size-from, ErrLimit)
	}
	return from, gz, nil
}

// Manifest gets the host's manifest (GET /content/manifest), reading at
// most lim.MaxManifestBytes, and decodes it with lim. It returns the
// manifest's hash too.
func (s HTTPSource) Manifest(ctx context.Context, lim Limits) (*Manifest, Sum, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.Base, "/")+ManifestPath, nil)
	if err != nil {
		return nil, Sum{}, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	client := s.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, Sum{}, fmt.Errorf("content manifest: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, Sum{}, fmt.Errorf("content manifest: the host answered %s", resp.Status)
	}
	if resp.ContentLength > int64(lim.MaxManifestBytes) {
		return nil, Sum{}, fmt.Errorf("content manifest of %d bytes: %w (%d)", resp.ContentLength, ErrLimit, lim.MaxManifestBytes)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(lim.MaxManifestBytes)+1))
	if err != nil {
		return nil, Sum{}, fmt.Errorf("content manifest: %w", err)
	}
	m, err := Decode(b, lim)
	if err != nil {
		return nil, Sum{}, err
	}
	return m, sha256.Sum256(b), nil
}
