package savelock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Suffix is added to a save's path to name its lock file.
const Suffix = ".lock"

// Path is the lock file of the save at savePath.
func Path(savePath string) string { return savePath + Suffix }

// Holder says which process holds a save's lock.
type Holder struct {
	PID int
	// Addr is the address the holder accepts players on, once known.
	Addr  string
	Since time.Time
}

// HeldError is the error of a save whose lock another process holds.
type HeldError struct {
	Save string
	// Holder is what the lock file says; Known is false when it could not
	// be read (a holder that has not written it yet).
	Holder Holder
	Known  bool
}

func (e *HeldError) Error() string {
	if !e.Known {
		return fmt.Sprintf("the save %s is in use by another host (its lock file %s is held); stop that host first, or name another save", e.Save, Path(e.Save))
	}
	who := fmt.Sprintf("process %d", e.Holder.PID)
	if e.Holder.Addr != "" {
		who += ", listening on " + e.Holder.Addr
	}
	return fmt.Sprintf("the save %s is in use by another host (%s, since %s); stop that host first, or name another save",
		e.Save, who, e.Holder.Since.Format("2006-01-02 15:04:05 MST"))
}

// Lock is a held save lock.
type Lock struct {
	fl     *flock.Flock
	save   string
	holder Holder
}

// The holder's lines start at offset 1: on Windows, LockFileEx locks the
// file's first byte, which no other handle may then read or write.
const infoOffset = 1

// maxInfo bounds what is read of a lock file.
const maxInfo = 4096

// Acquire takes the lock of the save at savePath for this process, or
// returns a *HeldError when another process holds it. The lock file is
// made if missing; the save itself need not exist.
func Acquire(savePath string, now time.Time) (*Lock, error) {
	fl := flock.New(Path(savePath), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock the save %s: %w", savePath, err)
	}
	if !ok {
		h, known := readHolder(Path(savePath))
		return nil, &HeldError{Save: savePath, Holder: h, Known: known}
	}
	l := &Lock{fl: fl, save: savePath, holder: Holder{PID: os.Getpid(), Since: now}}
	if err := l.write(); err != nil {
		fl.Unlock()
		return nil, err
	}
	return l, nil
}

// Check reports whether another process holds the lock of the save at
// savePath, as a *HeldError; nil when none does. It takes the lock for a
// moment, so it must not be used on a save this process holds.
func Check(savePath string) error {
	if _, err := os.Stat(Path(savePath)); errors.Is(err, os.ErrNotExist) {
		return nil // never hosted, and not creating a lock file for a look
	}
	fl := flock.New(Path(savePath), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return fmt.Errorf("check the lock of %s: %w", savePath, err)
	}
	if ok {
		return fl.Unlock()
	}
	h, known := readHolder(Path(savePath))
	return &HeldError{Save: savePath, Holder: h, Known: known}
}

// SetAddr records the address the holder accepts players on.
func (l *Lock) SetAddr(addr string) error {
	l.holder.Addr = addr
	return l.write()
}

// Release gives the lock up. The operating system also releases it when
// the process ends.
func (l *Lock) Release() error { return l.fl.Unlock() }

// write puts the holder's lines in the lock file.
func (l *Lock) write() error {
	f, err := os.OpenFile(Path(l.save), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("lock file of %s: %w", l.save, err)
	}
	defer f.Close()
	text := fmt.Sprintf("pid=%d\naddr=%s\nsince=%s\n", l.holder.PID, l.holder.Addr, l.holder.Since.Format(time.RFC3339))
	if err := f.Truncate(infoOffset); err != nil {
		return fmt.Errorf("lock file of %s: %w", l.save, err)
	}
	if _, err := f.WriteAt([]byte(text), infoOffset); err != nil {
		return fmt.Errorf("lock file of %s: %w", l.save, err)
	}
	return nil
}

// readHolder reads what a lock file says of its holder.
func readHolder(path string) (Holder, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, infoOffset, maxInfo))
	if err != nil {
		return Holder{}, false
	}
	var h Holder
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "pid":
			h.PID, _ = strconv.Atoi(v)
		case "addr":
			h.Addr = v
		case "since":
			h.Since, _ = time.Parse(time.RFC3339, v)
		}
	}
	return h, h.PID > 0 && !h.Since.IsZero()
}
