package desync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/internal/atomicfile"
	"github.com/lockhost/lockhost/lockstep"
)

// Version is the report format version this package writes and reads.
const Version = 1

// Keep is how many reports Write leaves in a folder: the newest ones.
const Keep = 200

// MaxReportSize is the largest report file Read accepts, in bytes.
const MaxReportSize = 64 << 20

// DirName is the name of the folder, inside the host's data folder, that
// holds the desync reports.
const DirName = "desyncs"

// Values of Report.Scope.
const (
	// ScopeMap means at least one map's hash differs.
	ScopeMap = "map"
	// ScopeWorld means the world hash differs while every map's matches:
	// the world-level state diverged.
	ScopeWorld = "world"
)

// Values of Report.Repair.
const (
	// RepairMap means the host resent the differing maps.
	RepairMap = "map"
	// RepairWorld means the host resent the whole world.
	RepairWorld = "world"
	// RepairDrop means the host dropped the player: too many desyncs
	// within the drop window.
	RepairDrop = "drop"
)

// Values of Report.Reference other than ReferenceMajority's.
const (
	// ReferenceHost means the host's own simulation gave the hashes the
	// client was compared with.
	ReferenceHost = "host"
	// ReferenceArbiter means a relay session's arbiter gave them.
	ReferenceArbiter = "arbiter"
)

// ReferenceMajority is Report.Reference for hashes that k of the n
// players who reported the checkpoint agreed on, in a relay session
// without an arbiter: "majority k of n players". The host counts one
// vote per network (docs/protocol.md, section 14.6.1): k and n are
// votes.
func ReferenceMajority(k, n int) string {
	return fmt.Sprintf("majority %d of %d players", k, n)
}

// Errors that Read wraps; test for them with errors.Is.
var (
	// ErrTooLarge is a file larger than MaxReportSize.
	ErrTooLarge = errors.New("desync report too large")
	// ErrVersion is a report of a format version other than Version.
	ErrVersion = errors.New("unsupported desync report version")
)

// Report is one detected desync.
type Report struct {
	// Version is the format version, Version (1). Write fills in 0.
	Version int `json:"version"`
	// Time is when the host detected the desync. Write fills in a zero
	// Time with the current time.
	Time time.Time `json:"time"`
	// Game is the session's name.
	Game string `json:"game"`
	// PlayerID is the ID of the player whose hashes differ.
	PlayerID int32 `json:"player_id"`
	// Player is that player's name.
	Player string `json:"player"`
	// Tick is the checkpoint tick whose hashes differ.
	Tick uint64 `json:"tick"`
	// HostTick is the host's tick when it detected the desync.
	HostTick uint64 `json:"host_tick"`
	// Scope is ScopeMap or ScopeWorld.
	Scope string `json:"scope"`
	// MapIDs are the maps whose hashes differ; empty when only the world
	// hash differs.
	MapIDs []int32 `json:"map_ids"`
	// WorldHost is the world hash the client was compared with at Tick:
	// the host's own, or its arbiter's or players' majority (Reference).
	WorldHost uint64 `json:"world_host"`
	// WorldClient is the client's world hash at Tick.
	WorldClient uint64 `json:"world_client"`
	// Maps holds every map the client reported, matching or not.
	Maps []MapCheck `json:"maps"`
	// Commands are the commands of the last window before Tick, ticks
	// CommandsFrom through Tick-1, in the order the host applied them.
	Commands []CommandRecord `json:"commands"`
	// CommandsFrom is the first tick the Commands window covers.
	CommandsFrom uint64 `json:"commands_from"`
	// Repair is what the host did: RepairMap, RepairWorld or RepairDrop.
	Repair string `json:"repair"`
	// Count is this player's desyncs within the drop window, this one
	// included.
	Count int `json:"count"`
	// Reference says whose hashes WorldHost and the maps' Host hashes
	// are: ReferenceHost, ReferenceArbiter or ReferenceMajority's. Empty
	// in reports written before it was recorded.
	Reference string `json:"reference,omitempty"`
	// Explanation says at which tick, how and in which fields the
	// player's state departed from the host's, when the host could work
	// it out (package desync/explain); nil otherwise, and in reports
	// written before it was recorded. The format version stays 1: a
	// report without it reads as before.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// MapCheck compares one map's hashes at the report's tick.
type MapCheck struct {
	// ID is the map's ID.
	ID int32 `json:"id"`
	// Host is the host's hash of the map.
	Host uint64 `json:"host"`
	// Client is the client's hash of the map.
	Client uint64 `json:"client"`
	// Match tells whether the two agree.
	Match bool `json:"match"`
	// Parts compares the map's part hashes, when the game hashes parts
	// (lockstep.MapDigester) and the client sent them.
	Parts []PartCheck `json:"parts,omitempty"`
}

// PartCheck compares the hashes of one part of a map.
type PartCheck struct {
	// Name is the part's name (lockstep.MapDigester.MapPartNames).
	Name string `json:"name"`
	// Host is the host's hash of the part.
	Host uint64 `json:"host"`
	// Client is the client's hash of the part.
	Client uint64 `json:"client"`
	// Match tells whether the two agree.
	Match bool `json:"match"`
}

// CommandRecord is a lockstep.Command as a report stores it: the same
// fields under snake_case JSON names, the payload in base64.
type CommandRecord struct {
	// Tick is the tick the command applies at.
	Tick uint64 `json:"tick"`
	// Seq is its order of application within Tick.
	Seq uint32 `json:"seq"`
	// MapID is the map it acts on.
	MapID int32 `json:"map_id"`
	// Kind is the command kind.
	Kind uint16 `json:"kind"`
	// Player is the ID of the player who sent it.
	Player int32 `json:"player"`
	// Payload is the command's payload.
	Payload []byte `json:"payload"`
}

// Records converts commands for a Report. The records share the
// commands' payloads.
func Records(cmds []lockstep.Command) []CommandRecord {
	if cmds == nil {
		return nil
	}
	out := make([]CommandRecord, len(cmds))
	for i, c := range cmds {
		out[i] = CommandRecord{Tick: c.Tick, Seq: c.Seq, MapID: c.MapID, Kind: c.Kind, Player: c.Player, Payload: c.Payload}
	}
	return out
}

// Command converts the record back to the command it was made from.
func (c CommandRecord) Command() lockstep.Command {
	return lockstep.Command{Tick: c.Tick, Seq: c.Seq, MapID: c.MapID, Kind: c.Kind, Player: c.Player, Payload: c.Payload}
}

// DiffParts summarizes what differs, one string per differing map in
// the order of Maps: "map 3: things, things rows q2" names the parts whose
// hashes differ, "map 3" is a map without differing part hashes. Maps in
// MapIDs that Maps does not mark as differing follow, as "map N". It is
// empty when only the world hash differs.
func (r *Report) DiffParts() []string {
	var out []string
	seen := map[int32]bool{}
	for _, m := range r.Maps {
		if m.Match || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		var names []string
		for _, p := range m.Parts {
			if !p.Match {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			out = append(out, fmt.Sprintf("map %d", m.ID))
		} else {
			out = append(out, fmt.Sprintf("map %d: %s", m.ID, strings.Join(names, ", ")))
		}
	}
	for _, id := range r.MapIDs {
		if !seen[id] {
			seen[id] = true
			out = append(out, fmt.Sprintf("map %d", id))
		}
	}
	return out
}

// nameTimeLayout is the time in a report's file name: UTC, fixed width,
// so that names sort by time.
const nameTimeLayout = "20060102T150405.000000000Z"

// namePattern matches the file names Write gives reports.
var namePattern = regexp.MustCompile(`^desync-[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-t[0-9]+-p-?[0-9]+\.json$`)

// fileName is the name Write gives a report detected at t.
func fileName(t time.Time, tick uint64, player int32) string {
	return "desync-" + t.UTC().Format(nameTimeLayout) + "-t" + strconv.FormatUint(tick, 10) +
		"-p" + strconv.FormatInt(int64(player), 10) + ".json"
}

// isReportName tells whether name follows the pattern of Write's names.
func isReportName(name string) bool { return namePattern.MatchString(name) }

// Write writes r into dir, creating dir (0o755) if needed, as indented
// JSON under a name that sorts by time (see the package documentation),
// atomically. It then prunes dir to its newest Keep reports, never the
// one just written, deleting only files named like reports. r is not
// modified: a zero Version is written as Version and a zero Time as the
// current time, and nil lists as empty ones. If the report was written
// but pruning failed, Write returns the report's path and an error saying
// so.
func Write(dir string, r *Report) (path string, err error) {
	if r == nil {
		return "", errors.New("write desync report: no report")
	}
	rep := *r
	if rep.Version == 0 {
		rep.Version = Version
	}
	if rep.Version != Version {
		return "", fmt.Errorf("write desync report: %w %d (this build writes version %d)", ErrVersion, rep.Version, Version)
	}
	if rep.Time.IsZero() {
		rep.Time = time.Now()
	}
	// Empty lists as [] rather than null, for tools other than Read.
	if rep.MapIDs == nil {
		rep.MapIDs = []int32{}
	}
	if rep.Maps == nil {
		rep.Maps = []MapCheck{}
	}
	if rep.Commands == nil {
		rep.Commands = []CommandRecord{}
	}
	b, err := json.MarshalIndent(&rep, "", "  ")
	if err != nil {
		return "", fmt.Errorf("write desync report: %w", err)
	}
	b = append(b, '\n')
	if len(b) > MaxReportSize {
		return "", fmt.Errorf("write desync report: %w: %d bytes, at most %d are read back", ErrTooLarge, len(b), MaxReportSize)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write desync report: %w", err)
	}
	// Two reports of one player, tick and nanosecond would share a name;
	// the later one takes the next free nanosecond, so names still sort
	// by time.
	t := rep.Time
	for {
		path = filepath.Join(dir, fileName(t, rep.Tick, rep.PlayerID))
		if _, err := os.Lstat(path); err != nil {
			break // free, or the write will say what is wrong
		}
		t = t.Add(time.Nanosecond)
	}
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write desync report %s: %w", path, err)
	}
	if err := prune(dir, filepath.Base(path)); err != nil {
		return path, fmt.Errorf("desync report %s written, but pruning old reports failed: %w", path, err)
	}
	return path, nil
}

// prune deletes the oldest reports in dir beyond the newest Keep, sparing
// the file named keep.
func prune(dir, keep string) error {
	names, err := reportNames(dir)
	if err != nil {
		return err
	}
	extra := len(names) - Keep
	var errs []error
	for _, name := range names {
		if extra <= 0 {
			break
		}
		if name == keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		extra--
	}
	return errors.Join(errs...)
}

// reportNames lists the names of the regular files in dir named like
// reports, oldest first.
func reportNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && isReportName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Read reads and checks the report at path. A file over MaxReportSize is
// refused before it is read (ErrTooLarge); the JSON must be one report
// with no unknown fields and nothing after it, of format Version
// (ErrVersion otherwise). Errors name the file.
func Read(path string) (*Report, error) {
	r, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("desync report %s: %w", path, err)
	}
	return r, nil
}

func read(path string) (*Report, error) {
	// Stat before opening: opening a FIFO for reading would block.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > MaxReportSize {
		return nil, fmt.Errorf("%w: the file has %d bytes, at most %d are read", ErrTooLarge, st.Size(), MaxReportSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxReportSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxReportSize {
		return nil, fmt.Errorf("%w: the file grew past %d bytes while being read", ErrTooLarge, MaxReportSize)
	}
	return decode(b)
}

// decode parses one report. It is Read without the file.
func decode(b []byte) (*Report, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("the file is empty")
	}
	// The version first, leniently, so that a newer report is called
	// that rather than a report with unknown fields.
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, jsonError(err)
	}
	if probe.Version == nil {
		return nil, errors.New("not a desync report: it has no version")
	}
	if *probe.Version != Version {
		return nil, fmt.Errorf("%w %d (this build reads version %d)", ErrVersion, *probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a desync report: data follows the report")
	}
	return &r, nil
}

// jsonError words a JSON decoding error.
func jsonError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end"):
		return fmt.Errorf("the file is truncated: %w", err)
	}
	return fmt.Errorf("not a desync report: %w", err)
}

// Entry is one report file in a folder.
type Entry struct {
	// Path is the file's path: the folder given to List joined with the
	// file's name.
	Path string
	// Report is the report, nil when Err is set.
	Report *Report
	// Err is why the file cannot be read, as Read says.
	Err error
}

// List reads the reports in dir, oldest first by file name (which sorts
// by the time Write was given). Only regular files named like reports
// are listed; one that cannot be read is listed with its Err rather than
// failing the list. A folder that does not exist holds no reports.
func List(dir string) ([]Entry, error) {
	names, err := Names(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(names))
	for _, name := range names {
		p := filepath.Join(dir, name)
		r, err := Read(p)
		out = append(out, Entry{Path: p, Report: r, Err: err})
	}
	return out, nil
}

// Names lists the file names of the reports in dir without reading them:
// the files List reads, in List's order (oldest first). A folder that
// does not exist holds no reports.
func Names(dir string) ([]string, error) {
	names, err := reportNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list desync reports: %w", err)
	}
	return names, nil
}
