package coordserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lockhost/lockhost/transport/coord"
	"os"
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/atomicfile"
)

// owners is which public key holds each code: the first to register it,
// until it has not registered for ttl. A code has about 35 bits, few
// enough that someone could search out a key of their own that gives
// another host's code; the table refuses that key. It is kept in a file
// when the coordinator has one, so a restart does not free every code.
type owners struct {
	path string // "" keeps the table in memory only
	ttl  time.Duration
	max  int

	mu sync.Mutex
	m  map[coord.Code]ownerRec
}

// ownerRec is one code's holder and when it last registered.
type ownerRec struct {
	Key  string    `json:"key"`
	Seen time.Time `json:"seen"`
}

// maxOwnersFile bounds the owners file read back.
const maxOwnersFile = 64 << 20

// loadOwners reads the table from path ("" or a missing file: empty). A
// restart counts as a registration of every code it holds, so that no
// code is freed before its host had the time to come back.
func loadOwners(path string, ttl time.Duration, max int, now time.Time) (*owners, error) {
	o := &owners{path: path, ttl: ttl, max: max, m: map[coord.Code]ownerRec{}}
	if path == "" {
		return o, nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return o, nil
	}
	if err == nil && fi.Size() > maxOwnersFile {
		err = fmt.Errorf("larger than %d bytes", maxOwnersFile)
	}
	var b []byte
	if err == nil {
		b, err = os.ReadFile(path)
	}
	if err == nil {
		err = json.Unmarshal(b, &o.m)
	}
	if err != nil {
		return nil, fmt.Errorf("code owners file %s: %w", path, err)
	}
	for code, rec := range o.m {
		if _, err := coord.ParseCode(string(code)); err != nil || !coord.IsCode(string(code)) {
			return nil, fmt.Errorf("code owners file %s: bad code %q", path, code)
		}
		rec.Seen = now
		o.m[code] = rec
	}
	return o, nil
}

// claim lets key hold code at now: a code nobody holds, or one whose
// holder has not been seen for ttl, goes to key; one held by another key
// is refused.
func (o *owners) claim(code coord.Code, key string, now time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec, held := o.m[code]
	if held && rec.Key != key && now.Sub(rec.Seen) < o.ttl {
		return fmt.Errorf("the code %s is held by another host", code)
	}
	if !held && len(o.m) >= o.max {
		o.prune(now)
		if len(o.m) >= o.max {
			return errors.New("the coordinator holds as many codes as it may: try again later")
		}
	}
	o.m[code] = ownerRec{Key: key, Seen: now}
	if held && rec.Key == key {
		return nil // a host coming back: no need to write
	}
	o.prune(now)
	return o.save()
}

// seen notes that key, holding code, was registered until now.
func (o *owners) seen(code coord.Code, key string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if rec, ok := o.m[code]; ok && rec.Key == key {
		o.m[code] = ownerRec{Key: key, Seen: now}
	}
}

// prune forgets the codes not seen for ttl.
func (o *owners) prune(now time.Time) {
	for code, rec := range o.m {
		if now.Sub(rec.Seen) >= o.ttl {
			delete(o.m, code)
		}
	}
}

// save writes the table, when it has a file.
func (o *owners) save() error {
	if o.path == "" {
		return nil
	}
	b, err := json.Marshal(o.m)
	if err == nil {
		err = atomicfile.WriteFile(o.path, b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("code owners file: %w", err)
	}
	return nil
}
