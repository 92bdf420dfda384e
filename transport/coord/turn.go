package coord

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"strconv"
	"time"
)

// TURNCredentials makes short-lived credentials for a TURN server that
// shares secret with the coordinator, by the TURN REST API convention
// (coturn's use-auth-secret): the username is the expiry in Unix seconds,
// a colon and id; the password is the base64 of HMAC-SHA1 of the username
// keyed with the secret. The server accepts them until the expiry.
func TURNCredentials(secret []byte, id string, expiry time.Time) (username, password string) {
	username = strconv.FormatInt(expiry.Unix(), 10) + ":" + id
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
