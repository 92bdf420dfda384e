package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/lockhost/lockhost"

// floor is a level of the architecture. A package may import packages on
// its own floor or below, never above: the arrows point down.
type floor int

// The floors, from the ground up.
const (
	// ground: utilities that know nothing of the product (files, the
	// msgpack handle, rate limits, terminal text, address keys).
	ground floor = iota
	// engine: the lockstep engine, content definitions and the password
	// check, which need nothing but the ground.
	engine
	// domain: what the host and the joiner are built from: the protocol,
	// join point payloads, saves, the reference game, content loading.
	domain
	// sides: the host and the joining side.
	sides
	// hostAddOns: what runs beside a host (admin, metrics, the status
	// page, the host's view of content).
	hostAddOns
	// testTooling: helpers for tests, importable only from tests and from
	// the benchmarks and soak in scripts/ (see testToolingUser).
	testTooling
	// cliGlue: what the two command-line tools share (flags, exit codes,
	// the defs command).
	cliGlue
	// tools: the command-line tools and the programs in scripts/.
	tools
)

var floorNames = [...]string{"ground", "engine", "domain", "sides", "host add-ons", "test tooling", "CLI glue", "tools"}

func (f floor) String() string { return floorNames[f] }

// floors places every package of the module (a path ending in "/*" covers
// the packages under it). A new package must be placed here.
var floors = map[string]floor{
	"internal/addrkey":    ground,
	"internal/atomicfile": ground,
	"internal/codec":      ground,
	"internal/ratelimit":  ground,
	"internal/termsafe":   ground,
	"internal/savelock":   ground,
	"internal/gcpolicy":   ground,
	"internal/hugeheap":   ground,

	"lockstep": engine,
	"defs":     engine,
	"password": engine,

	"wire":     domain,
	"snapshot": domain,
	"saves":    domain,
	"desync":   domain,
	// replay is a session's recording: a start save and the commands and
	// checkpoints after it.
	"replay": domain,
	// desync/explain works out what a desync report says happened: it
	// re-simulates through the lockstep interface and fills in desync's
	// Explanation.
	"desync/explain": domain,
	// resim re-simulates a desync's window on one machine: the player's
	// half of an explanation and what both halves share, without the
	// host's desync reports, so the join tool links it.
	"resim": domain,
	// host/relay stands in for the game on a relay host; it links none.
	// It and host/roster are parts of the host, in its folder but a floor
	// below package host, which imports them.
	"host/relay":  domain,
	"host/roster": domain,
	// host/gate is the host's connection gate: pending connections,
	// guesses of secrets, connection rates, the refusal log; it knows no
	// protocol.
	"host/gate": domain,
	"status":    domain,
	// transport/ carries the protocol's byte stream over other carriers
	// than TCP, for the host's side and the joiner's; it knows no frame.
	"transport/ws": domain,
	// transport/portmap asks the home router to forward the game port
	// (UPnP-IGD, NAT-PMP); it knows no protocol of the host's either.
	"transport/portmap": domain,
	// transport/lan finds hosts on the local network: the probe and the
	// reply around a status reply.
	"transport/lan": domain,
	// transport/coord is the coordinator and its clients: invite codes,
	// lookups, the signalling relay, TURN credentials; it knows no frame
	// of the game protocol.
	"transport/coord": domain,
	// transport/coord/coordserver is the coordinator's server side, apart
	// so that the join tool links none of it.
	"transport/coord/coordserver": domain,
	// transport/coord/turnserver is the TURN relay the coordinator can
	// run in its own process (pion/turn); it knows no protocol of the host's.
	"transport/coord/turnserver": domain,
	// transport/coordice joins the coordinator's signalling and TURN
	// credentials to the ICE transport: the joiner's fallback, the host's
	// answerer.
	"transport/coordice": domain,
	// transport/ice carries it over a WebRTC data channel through ICE
	// (direct, hole punched or relayed by TURN).
	"transport/ice": domain,
	"tlsid":         domain,
	// operator/rcon sits with the operator's add-ons but knows nothing of
	// the host: it needs only the ground, so it stays on this floor.
	"operator/rcon": domain,
	// game/ is the reference game, apart from the platform: the colony
	// simulation and its content loader here, the host's view of its
	// content among the host add-ons.
	"game/colony":  domain,
	"game/content": domain,
	// game/colonycmd reads the colony's typed commands, for the join tool
	// and the browser player.
	"game/colonycmd": domain,
	// modsync is content sync: the manifest of shared mod files, the
	// joiner's cache and the transfer, beside defs, for host, join and
	// the browser player alike.
	"modsync": domain,

	"host": sides,
	"join": sides,
	// jointest is read by package join itself (settings that make a
	// client misbehave for tests of hosts, carried in a join's context):
	// not test tooling, and no ground utility either.
	"join/jointest": sides,

	"operator/admin":   hostAddOns,
	"operator/metrics": hostAddOns,
	"operator/web":     hostAddOns,
	// operator/play serves the browser player; its WebAssembly program
	// and the generator that builds it are tools.
	"operator/play":   hostAddOns,
	"operator/play/*": tools,
	// operator/agones speaks to the Agones SDK server and drives it from
	// a host's Overview.
	"operator/agones":  hostAddOns,
	"game/hostcontent": hostAddOns,

	"testing/corpus":        testTooling,
	"testing/attack":        testTooling,
	"testing/hosttest":      testTooling,
	"testing/testkit":       testTooling,
	"testing/procstat":      testTooling,
	"testing/rawclient":     testTooling,
	"testing/rawconn":       testTooling,
	"testing/syncbuf":       testTooling,
	"testing/agonestest":    testTooling,
	"testing/browsertest":   testTooling,
	"testing/turntest":      testTooling,
	"lockstep/locksteptest": testTooling,
	"saves/savestest":       testTooling,
	// archtest has tests only; nothing imports it.
	"testing/archtest": testTooling,

	"cmd/internal/cliutil":    cliGlue,
	"cmd/internal/defscli":    cliGlue,
	"cmd/internal/contentcli": cliGlue,

	"cmd/host":  tools,
	"cmd/join":  tools,
	"scripts/*": tools,
}

// floorOf returns the floor of the module package rel (a path inside the
// module) and the table key that placed it.
func floorOf(rel string) (floor, string, bool) {
	if f, ok := floors[rel]; ok {
		return f, rel, true
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if f, ok := floors[dir+"/*"]; ok {
			return f, dir + "/*", true
		}
	}
	return 0, "", false
}

// testToolingUser says whether the non-test code of rel may import test
// tooling: other test tooling, and the benchmarks and soak in scripts/.
func testToolingUser(rel string) bool {
	f, _, _ := floorOf(rel)
	return f == testTooling || strings.HasPrefix(rel, "scripts/")
}

// arrowErrors checks the non-test imports of the module package rel and
// returns one sentence per import that points up or reaches test tooling
// from where it may not.
func arrowErrors(rel string, imports []string) []string {
	from, _, ok := floorOf(rel)
	if !ok {
		return []string{fmt.Sprintf("%s has no floor: place it in the floors table", rel)}
	}
	var errs []string
	for _, imp := range imports {
		to, ok := strings.CutPrefix(imp, module+"/")
		if !ok {
			continue
		}
		f, _, ok := floorOf(to)
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s imports %s, which has no floor: place it in the floors table", rel, to))
		case f == testTooling && !testToolingUser(rel):
			errs = append(errs, fmt.Sprintf("%s (%s) imports the test tooling %s: only tests and scripts may", rel, from, to))
		case f > from:
			errs = append(errs, fmt.Sprintf("%s (%s) imports %s (%s): an arrow up", rel, from, to, f))
		}
	}
	return errs
}

// listed is what go list -json says of one package.
type listed struct {
	ImportPath string
	Imports    []string
}

// modulePackages lists the module's packages and their non-test imports
// with the go tool, for the host OS and for Windows (build tags may add
// imports).
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, goos := range []string{"", "windows"} {
		cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
		if goos != "" {
			cmd.Env = append(cmd.Environ(), "GOOS="+goos)
		}
		b, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list (GOOS=%q): %v\n%s", goos, err, ee.Stderr)
			}
			t.Fatalf("go list (GOOS=%q): %v", goos, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		for {
			var p listed
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("go list output: %v", err)
			}
			rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
			if !ok {
				t.Fatalf("go list listed %s, outside the module", p.ImportPath)
			}
			for _, imp := range p.Imports {
				if !slices.Contains(out[rel], imp) {
					out[rel] = append(out[rel], imp)
				}
			}
			if _, ok := out[rel]; !ok {
				out[rel] = nil
			}
		}
	}
	return out
}

// TestImportsPointDown lists every package of the module with the go tool
// and fails on an import that points to a higher floor, on test tooling
// imported by non-test code outside scripts/, on a package the floors
// table does not place, and on a table entry that places no package.
func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	pkgs := modulePackages(t)
	if len(pkgs) < 40 {
		t.Fatalf("go list gave %d packages of the module: too few to check the floors", len(pkgs))
	}
	used := map[string]bool{}
	arrows := 0
	for rel, imports := range pkgs {
		for _, e := range arrowErrors(rel, imports) {
			t.Error(e)
		}
		if _, key, ok := floorOf(rel); ok {
			used[key] = true
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, module+"/") {
				arrows++
			}
		}
	}
	for key := range floors {
		if !used[key] {
			t.Errorf("the floors table places %s, which is no package of the module", key)
		}
	}
	if arrows < 120 {
		t.Fatalf("only %d imports between the module's packages: the listing is wrong", arrows)
	}
	t.Logf("%d packages, %d imports between them checked", len(pkgs), arrows)
}

// TestArrowErrors checks the rule itself, so that it cannot pass by
// finding nothing.
func TestArrowErrors(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	tests := []struct {
		pkg     string
		imports []string
		bad     int
	}{
		{"host", []string{m("wire"), m("internal/codec"), "fmt", m("join")}, 0},
		{"wire", []string{m("host")}, 1},
		{"lockstep", []string{m("wire"), m("defs")}, 1},
		// a folder under host/ gives no floor of its own: host/roster is
		// domain, package host is above it.
		{"host/roster", []string{m("host"), m("wire")}, 1},
		{"game/content", []string{m("cmd/internal/cliutil")}, 1},
		{"cmd/host", []string{m("testing/testkit")}, 1},
		{"host", []string{m("testing/hosttest")}, 1},
		{"scripts/cmd/soak", []string{m("testing/testkit"), m("host"), m("cmd/internal/cliutil")}, 0},
		{"testing/hosttest", []string{m("testing/testkit"), m("host"), m("join")}, 0},
		{"testing/hosttest", []string{m("cmd/internal/cliutil")}, 1},
		{"newpkg", nil, 1},
		{"host", []string{m("newpkg")}, 1},
	}
	for _, tc := range tests {
		if got := arrowErrors(tc.pkg, tc.imports); len(got) != tc.bad {
			t.Errorf("%s importing %v: %d errors %v, want %d", tc.pkg, tc.imports, len(got), got, tc.bad)
		}
	}
}
