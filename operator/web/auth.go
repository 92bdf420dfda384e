package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// authRealm names the status page in the browser's password prompt.
const authRealm = `Basic realm="lockhost status", charset="UTF-8"`

// tokenCheck accepts a request that carries the status token, either as
// "Authorization: Bearer TOKEN" (scrapers, scripts) or as HTTP basic
// authentication with the token as the password and any user name (a
// browser, which then sends it again for /events and /api/overview).
type tokenCheck struct {
	sum [sha256.Size]byte // of the token; compared in constant time
}

func newTokenCheck(token string) *tokenCheck {
	return &tokenCheck{sum: sha256.Sum256([]byte(token))}
}

// ok reports whether r carries the token.
func (c *tokenCheck) ok(r *http.Request) bool {
	var given string
	if _, pw, isBasic := r.BasicAuth(); isBasic {
		given = pw
	} else if scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		given = strings.TrimSpace(cred)
	} else {
		return false
	}
	sum := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(sum[:], c.sum[:]) == 1
}

// guard answers 401 to a request without the token and passes the rest
// to next.
func (c *tokenCheck) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.ok(r) {
			w.Header().Set("WWW-Authenticate", authRealm)
			http.Error(w, "401 unauthorized: this status page needs its token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
