package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/internal/atomicfile"
)

// BansFileName is the ban list's file name in the host's data folder.
const BansFileName = "bans.json"

// maxBansFile bounds the ban list read at start (a damaged or hostile file
// is refused, not read whole).
const maxBansFile = 8 << 20

// Ban is one entry of the host's ban list: a username or an IP address,
// until a time or for good.
type Ban struct {
	// Name is a banned username, matched without regard to letter case.
	Name string `json:"name,omitempty"`
	// Addr is a banned IP address; an IPv6 address bans its /64, as every
	// per-address limit counts it.
	Addr string `json:"addr,omitempty"`
	// Until is when the ban ends; zero bans for good.
	Until time.Time `json:"until,omitzero"`
	// Reason is shown to the banned player.
	Reason string `json:"reason,omitempty"`
	// By is who banned (console, rcon ADDR, api).
	By string `json:"by"`
	// At is when the ban was made.
	At time.Time `json:"at"`
}

// Target is the name or address the ban is for.
func (b Ban) Target() string {
	if b.Addr != "" {
		return b.Addr
	}
	return b.Name
}

// active reports whether the ban is in force at now.
func (b Ban) active(now time.Time) bool { return b.Until.IsZero() || now.Before(b.Until) }

// matches reports whether the ban covers a player named name connecting
// from the address key key (addrkey.Of of its IP).
func (b Ban) matches(name, key string) bool {
	if b.Name != "" && strings.EqualFold(b.Name, name) {
		return true
	}
	return b.Addr != "" && key != "" && addrkey.Of(b.Addr) == key
}

// sameTarget reports whether b is for target (a name or an address).
func (b Ban) sameTarget(target string) bool {
	if b.Addr != "" {
		return addrkey.Of(b.Addr) == addrkey.Of(target)
	}
	return strings.EqualFold(b.Name, target)
}

// bannedError refuses a banned player's join or rejoin.
type bannedError struct{ ban Ban }

func (e *bannedError) Error() string {
	msg := "You are banned from this session"
	if !e.ban.Until.IsZero() {
		msg += " until " + e.ban.Until.UTC().Format("2006-01-02 15:04 UTC")
	}
	if e.ban.Reason != "" {
		msg += ": " + e.ban.Reason
	}
	return msg + "."
}

// banList is the ban list, kept in a file (if path is set) that every
// change rewrites atomically. Its methods are safe for concurrent use.
type banList struct {
	mu   sync.Mutex
	path string
	bans []Ban
}

// CheckBanFile reads the ban list at path as New will, so that a tool can
// find a damaged or unreadable list before it spends time on a world.
func CheckBanFile(path string) error {
	_, err := loadBans(path)
	return err
}

// loadBans reads the ban list at path; a missing file is an empty list.
// An empty path keeps the list in memory only.
func loadBans(path string) (*banList, error) {
	bl := &banList{path: path}
	if path == "" {
		return bl, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return bl, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ban list: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxBansFile+1))
	if err != nil {
		return nil, fmt.Errorf("ban list %s: %w", path, err)
	}
	if len(raw) > maxBansFile {
		return nil, fmt.Errorf("ban list %s: over %d bytes", path, maxBansFile)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return bl, nil
	}
	if err := json.Unmarshal(raw, &bl.bans); err != nil {
		return nil, fmt.Errorf("ban list %s is damaged: %w", path, err)
	}
	return bl, nil
}

// saveLocked writes the list; the caller holds mu.
func (bl *banList) saveLocked() error {
	if bl.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(bl.bans, "", "  ")
	if err != nil {
		return fmt.Errorf("ban list: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(bl.path), 0o700); err != nil {
		return fmt.Errorf("ban list: %w", err)
	}
	if err := atomicfile.WriteFile(bl.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("ban list: %w", err)
	}
	return nil
}

// add puts b on the list, replacing a ban of the same target, and drops
// bans that are over.
func (bl *banList) add(b Ban, now time.Time) error {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	kept := bl.bans[:0:0]
	for _, old := range bl.bans {
		if old.active(now) && !old.sameTarget(b.Target()) {
			kept = append(kept, old)
		}
	}
	prev := bl.bans
	bl.bans = append(kept, b)
	if err := bl.saveLocked(); err != nil {
		bl.bans = prev
		return err
	}
	return nil
}

// remove lifts the bans of target and returns them.
func (bl *banList) remove(target string) ([]Ban, error) {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	var kept, gone []Ban
	for _, b := range bl.bans {
		if b.sameTarget(target) {
			gone = append(gone, b)
		} else {
			kept = append(kept, b)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	prev := bl.bans
	bl.bans = kept
	if err := bl.saveLocked(); err != nil {
		bl.bans = prev
		return nil, err
	}
	return gone, nil
}

// list returns the bans in force at now, oldest first.
func (bl *banList) list(now time.Time) []Ban {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	var out []Ban
	for _, b := range bl.bans {
		if b.active(now) {
			out = append(out, b)
		}
	}
	return out
}

// match returns the ban in force that covers name from key, if any.
func (bl *banList) match(name, key string, now time.Time) *Ban {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	for _, b := range bl.bans {
		if b.active(now) && b.matches(name, key) {
			return &b
		}
	}
	return nil
}

// parseBanTarget tells an IP address from a username; anything else is
// refused.
func parseBanTarget(target string) (name, addr string, err error) {
	if ip := net.ParseIP(target); ip != nil {
		return "", ip.String(), nil
	}
	if err := roster.ValidateName(target); err != nil {
		return "", "", fmt.Errorf("%q is neither an IP address nor a username: %w", target, err)
	}
	return target, "", nil
}
