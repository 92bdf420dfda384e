package host

import (
	"crypto/rand"
	"errors"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// rejoins holds the session tokens that let a player whose connection
// dropped come back as itself within the grace period. Only the session
// goroutine touches it.
type rejoins struct {
	grace  time.Duration      // Config.RejoinGrace
	tokens map[string]*rejoin // session token -> who it rejoins as
	seq    uint64             // the last join's number (joinProgress.seq)
}

// rejoin is what a session token gives back.
type rejoin struct {
	id        int32
	name      string
	spectator bool
	online    bool
	left      time.Time
	progress  *joinProgress // the join under way until WorldReady, for a resume
}

// errBadToken is a rejoin with an unknown or expired token.
var errBadToken = errors.New("unknown or expired session token")

// lookup returns who token rejoins as, or nil when the token is unknown
// or its grace period is over.
func (r *rejoins) lookup(token []byte) *rejoin {
	rj := r.tokens[string(token)]
	if rj == nil || !rj.online && time.Since(rj.left) > r.grace {
		return nil
	}
	return rj
}

// use spends a token: it is good for one rejoin.
func (r *rejoins) use(token []byte) {
	delete(r.tokens, string(token))
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
	r.tokens[string(token)] = &rejoin{id: id, name: name, spectator: spectator, online: true, progress: jp}
	return token
}

// left starts the grace period of player id's token.
func (r *rejoins) left(id int32, now time.Time) {
	for _, rj := range r.tokens {
		if rj.id == id && rj.online {
			rj.online, rj.left = false, now
		}
	}
}

// expire forgets the tokens whose grace period is over.
func (r *rejoins) expire(now time.Time) {
	for tok, rj := range r.tokens {
		if !rj.online && now.Sub(rj.left) > r.grace {
			delete(r.tokens, tok)
		}
	}
}
