package tlsid

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockhost/lockhost/internal/atomicfile"
)

// KnownHosts is a joiner's file of remembered host fingerprints. Each line
// is "HOST:PORT sha256:HEX"; text from '#' to the end of a line is a
// comment, and blank lines are ignored. Addresses are compared exactly as
// written. A file that does not exist is an empty one.
type KnownHosts struct {
	// Path is the file's location.
	Path string
}

// DefaultKnownHostsPath returns where a joiner keeps its known hosts:
// "lockhost/known_hosts" inside os.UserConfigDir.
func DefaultKnownHostsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("tlsid: find the known hosts file: %w", err)
	}
	return filepath.Join(dir, "lockhost", "known_hosts"), nil
}

// Lookup returns the fingerprint remembered for addr, with ok false if there
// is none. A malformed file is an error rather than being half read, so that
// a pin is never skipped unnoticed.
func (k *KnownHosts) Lookup(addr string) (fp string, ok bool, err error) {
	lines, err := k.read()
	if err != nil {
		return "", false, err
	}
	for _, l := range lines {
		if l.addr == addr {
			return l.fp, true, nil
		}
	}
	return "", false, nil
}

// Remember records fp as the fingerprint of addr, replacing the line already
// there for addr, if any, and keeping every other line and comment as it
// was. The file is written atomically (mode 0600) and its folder is made
// (0700) if needed. fp may be in any form ParseFingerprint accepts.
func (k *KnownHosts) Remember(addr, fp string) error {
	if err := checkAddr(addr); err != nil {
		return fmt.Errorf("tlsid: remember a host: %w", err)
	}
	norm, err := parseFingerprint(fp)
	if err != nil {
		return fmt.Errorf("tlsid: remember %s: %w", addr, err)
	}
	lines, err := k.read()
	if err != nil {
		return err
	}
	data := renderKnownHosts(lines, addr, norm)
	if err := os.MkdirAll(filepath.Dir(k.Path), 0o700); err != nil {
		return fmt.Errorf("tlsid: make folder for %s: %w", k.Path, err)
	}
	if err := atomicfile.WriteFile(k.Path, data, 0o600); err != nil {
		return fmt.Errorf("tlsid: write %s: %w", k.Path, err)
	}
	return nil
}

// knownLine is one line of a known hosts file: raw is its text as read,
// without the newline; addr and fp are set for entries and empty for blank
// and comment lines.
type knownLine struct {
	raw      string
	addr, fp string
}

// read reads and parses the file; a missing file gives no lines.
func (k *KnownHosts) read() ([]knownLine, error) {
	data, err := os.ReadFile(k.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tlsid: read known hosts: %w", err)
	}
	lines, err := parseKnownHosts(data)
	if err != nil {
		return nil, fmt.Errorf("tlsid: %s: %w", k.Path, err)
	}
	return lines, nil
}

// parseKnownHosts splits data into lines and parses each. It refuses lines
// that are not a valid address and fingerprint, and an address listed twice
// with different fingerprints.
func parseKnownHosts(data []byte) ([]knownLine, error) {
	text := string(data)
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, nil
	}
	raws := strings.Split(text, "\n")
	lines := make([]knownLine, 0, len(raws))
	seen := make(map[string]string)
	for i, raw := range raws {
		l := knownLine{raw: raw}
		content := raw
		if j := strings.IndexByte(content, '#'); j >= 0 {
			content = content[:j]
		}
		fields := strings.Fields(content)
		switch len(fields) {
		case 0:
		case 2:
			if err := checkAddr(fields[0]); err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			fp, err := parseFingerprint(fields[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			if prev, dup := seen[fields[0]]; dup && prev != fp {
				return nil, fmt.Errorf("line %d: %s is listed again with a different fingerprint", i+1, fields[0])
			}
			seen[fields[0]] = fp
			l.addr, l.fp = fields[0], fp
		default:
			return nil, fmt.Errorf("line %d: want \"HOST:PORT sha256:FINGERPRINT\", found %q", i+1, strings.TrimSpace(content))
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// renderKnownHosts returns the file text for lines with addr's entry set to
// fp: the first line for addr is replaced, later ones are dropped, and if
// there was none the entry is added at the end.
func renderKnownHosts(lines []knownLine, addr, fp string) []byte {
	var b strings.Builder
	entry := addr + " " + fp
	done := false
	for _, l := range lines {
		if l.addr == addr {
			if done {
				continue
			}
			l.raw, done = entry, true
		}
		b.WriteString(l.raw)
		b.WriteByte('\n')
	}
	if !done {
		b.WriteString(entry)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// checkAddr refuses addresses that are not HOST:PORT or could not be written
// as one field of a known hosts line.
func checkAddr(addr string) error {
	if addr == "" || strings.ContainsAny(addr, "#\n\r") || len(strings.Fields(addr)) != 1 || strings.TrimSpace(addr) != addr {
		return fmt.Errorf("address %q cannot be a known hosts entry", addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("address %q is not HOST:PORT", addr)
	}
	return nil
}
