package host

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"slices"
	"time"

	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/wire"
)

// rejoins holds the session tokens that let a player whose connection
// dropped come back as itself within the grace period. Only the session
// goroutine touches it. Tokens are kept by their SHA-256 hash, as the
// tokens file beside the save keeps them (tokenfile.go): the host checks
// a token, it never needs to show one again.
type rejoins struct {
	grace  time.Duration      // Config.Timeouts.RejoinGrace
	tokens map[string]*rejoin // SHA-256 of a session token -> who it rejoins as
	seq    uint64             // the last join's number (joinProgress.seq)
	dirty  bool               // tokens changed since the tokens file was last given them
}

// rejoin is what a session token gives back.
type rejoin struct {
	id        int32
	name      string
	spectator bool
	online    bool
	left      time.Time
	progress  *joinProgress // the join under way until WorldReady, for a resume
	held      heldRecord    // what the host knew of its world when it dropped (heldrejoin.go)
}

// errBadToken is a rejoin with an unknown or expired token.
var errBadToken = errors.New("unknown or expired session token")

// lookup returns who token rejoins as, or nil when the token is unknown
// or its grace period is over.
func (r *rejoins) lookup(token []byte) *rejoin {
	rj := r.tokens[tokenKey(token)]
	if rj == nil || !rj.online && time.Since(rj.left) > r.grace {
		return nil
	}
	return rj
}

// use spends a token: it is good for one rejoin.
func (r *rejoins) use(token []byte) {
	delete(r.tokens, tokenKey(token))
	r.dirty = true
}

// tokenKey is how a token is kept: its SHA-256 hash.
func tokenKey(token []byte) string {
	h := sha256.Sum256(token)
	return string(h[:])
}

// issue makes a new token for an admitted player whose join is jp, or nil
// if no random bytes could be had.
func (r *rejoins) issue(id int32, name string, spectator bool, jp *joinProgress) []byte {
	token := make([]byte, wire.TokenSize)
	if _, err := rand.Read(token); err != nil {
		return nil
	}
	if r.tokens == nil {
		r.tokens = map[string]*rejoin{}
	}
	r.tokens[tokenKey(token)] = &rejoin{id: id, name: name, spectator: spectator, online: true, progress: jp}
	r.dirty = true
	return token
}

// left starts the grace period of player id's token, which keeps what
// the host knew of its world.
func (r *rejoins) left(id int32, now time.Time, held heldRecord) {
	for _, rj := range r.tokens {
		if rj.id == id && rj.online {
			rj.online, rj.left, rj.held = false, now, held
			r.dirty = true
		}
	}
}

// expire forgets the tokens whose grace period is over.
func (r *rejoins) expire(now time.Time) {
	for tok, rj := range r.tokens {
		if !rj.online && now.Sub(rj.left) > r.grace {
			delete(r.tokens, tok)
			r.dirty = true
		}
	}
}

// snapshot is the tokens as the tokens file keeps them, with lastID the
// highest player ID handed out; it clears dirty.
func (r *rejoins) snapshot(lastID int32) saves.Tokens {
	r.dirty = false
	t := saves.Tokens{LastID: lastID, Players: make([]saves.TokenEntry, 0, len(r.tokens))}
	for key, rj := range r.tokens {
		e := saves.TokenEntry{Hash: []byte(key), ID: rj.id, Name: rj.name, Spectator: rj.spectator}
		if !rj.online {
			e.Left = rj.left.UnixMilli()
		}
		t.Players = append(t.Players, e)
	}
	slices.SortFunc(t.Players, func(a, b saves.TokenEntry) int { return cmp.Compare(a.ID, b.ID) })
	return t
}

// restore takes the tokens a host kept before it restarted. Every player
// is offline now: one that was online when the host stopped (or died) has
// its grace period from now, one that had left keeps its own. A restored
// token rejoins as a player that left, never as a download to resume.
func (r *rejoins) restore(t saves.Tokens, now time.Time) {
	if r.tokens == nil {
		r.tokens = map[string]*rejoin{}
	}
	for _, e := range t.Players {
		left := now
		if e.Left != 0 {
			left = time.UnixMilli(e.Left)
		}
		r.tokens[string(e.Hash)] = &rejoin{id: e.ID, name: e.Name, spectator: e.Spectator, left: left}
	}
	r.expire(now)
}
