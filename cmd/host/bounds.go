package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/wire"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/urfave/cli/v2"
)

// numbersRule is the one rule for every number option of the host's
// commands, said in serve's help: each takes a value in its range, and an
// option that can be switched off takes -1 for off (none, no limit,
// never; -1s for a duration), as host.Config does, so a value reaches the
// host as given. 0 is never special. Anything else is refused (exit 2,
// naming the option, and the config file and line when it came from one):
// no value silently becomes a default.
const numbersRule = "Every number option takes a value in the range its help gives. An option that can be switched off\n" +
	"takes -1 for off (-1s for a duration), where its help says what off means; 0 is never special.\n" +
	"Any other value is refused (exit 2), so no value silently becomes a default."

// numberRule is the values one number option takes: min to max (max 0:
// no upper bound), and what -1, its off value, means when it has one
// (the only key means may have). A duration option's values are in
// seconds.
type numberRule struct {
	min, max float64
	means    map[float64]string
	// maxWhy, if set, says where max comes from.
	maxWhy string
}

// numberRules are the rules of every number option of serve and saves
// new, by flag name: the one place they are written. A test fails when a
// number flag has none.
var numberRules = sync.OnceValue(func() map[string]numberRule {
	worldMax, worldWhy := maxWorldMiB()
	return map[string]numberRule{
		"tick-rate":            {min: 1, max: 1000},
		"discovery-port":       {min: 1, max: 65535, means: off("no LAN discovery")},
		"max-upload-slots":     {min: 1, means: off("no limit")},
		"slot-share-window":    {min: 0.1, means: off("a slot is kept until the download ends")},
		"max-players":          {min: 1, max: wire.MaxPlayers},
		"max-spectators":       {min: 1, max: wire.MaxPlayers, means: off("no spectators")},
		"conn-rate":            {min: math.SmallestNonzeroFloat64, means: off("no limit")},
		"max-pending":          {min: 1, means: off("no limit")},
		"max-pending-per-addr": {min: 1, means: off("no limit")},
		"min-download-rate":    {min: math.SmallestNonzeroFloat64, means: off("no minimum")},
		"autosave":             {min: math.SmallestNonzeroFloat64, means: off("never autosave")},
		"rejoin-window":        {min: math.SmallestNonzeroFloat64, means: off("keep none: every rejoin downloads the world")},
		"rejoin-grace":         {min: math.SmallestNonzeroFloat64},
		"keep":                 {min: 1, max: 1000},
		"max-lag":              {min: 1, max: 1 << 20},
		"max-hold":             {min: math.SmallestNonzeroFloat64, means: off("no limit")},
		"drop-cooldown":        {min: math.SmallestNonzeroFloat64, means: off("no wait")},
		"command-rate":         {min: math.SmallestNonzeroFloat64},
		"hash-every":           {min: 1, max: 1 << 20, means: off("no desync detection")},
		"desync-limit":         {min: 1, max: 1000},
		"desync-window":        {min: math.SmallestNonzeroFloat64},
		"drop-unverified":      {min: 1, max: 1000, means: off("never drop; only mark unverified")},
		"maps":                 {min: 1, max: colony.MaxMaps},
		"map-size":             {min: colony.MinSide, max: colony.MaxSide},
		"seed":                 {min: 0, max: math.MaxUint64},
		"things-per-map":       {min: 1, max: colony.MaxThingsPerMap / 2},
		"pawns-per-map":        {min: 1, max: colony.MaxPawnsPerMap},
		"idle-maps":            {min: 0, max: colony.MaxMaps},
		"world-mib":            {min: 1, max: float64(worldMax), maxWhy: worldWhy, means: off("not used: the map flags decide")},
		"relay-world-mib":      {min: 1, max: 1 << 22},
		"agones-idle":          {min: math.SmallestNonzeroFloat64, means: off("never shut down for want of players")},
		"agones-first-player":  {min: math.SmallestNonzeroFloat64, means: off("never shut down for want of a first player")},
		"record-segment-mib":   {min: 1, max: 4095},
		"record-keep":          {min: 1, max: 100000},
		// host coordinator's
		"turn-ttl":             {min: 60, max: 7 * 24 * 3600},
		"lookup-rate":          {min: math.SmallestNonzeroFloat64, means: off("no limit")},
		"lookup-burst":         {min: 1, max: 1 << 20},
		"register-rate":        {min: math.SmallestNonzeroFloat64, means: off("no limit")},
		"register-burst":       {min: 1, max: 1 << 20},
		"max-hosts":            {min: 1, max: 1 << 24},
		"turn-max-allocations": {min: 1, max: 1 << 20},
	}
})

// off is the means of an option that -1 switches off.
func off(meaning string) map[float64]string { return map[float64]string{-1: meaning} }

// maxWorldMiB is the largest --world-mib this machine takes, and why: a
// quarter of its memory, since the host holds about twice a world's raw
// size while it runs (the world and its compressed join point, and a
// joiner's download beside them). Without a reading of the memory it is
// 1024.
func maxWorldMiB() (int, string) {
	vm, err := mem.VirtualMemory()
	if err != nil || vm.Total == 0 {
		return 1024, "this machine's memory could not be read"
	}
	mib := int(vm.Total >> 20)
	return max(1, mib/4), fmt.Sprintf("a quarter of this machine's %d MiB of memory: the host holds about twice the world while it runs", mib)
}

// withRanges adds each number flag's range and special values to its
// help, from numberRules.
func withRanges(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		r, ok := numberRules()[f.Names()[0]]
		if !ok {
			continue
		}
		_, dur := f.(*cli.DurationFlag)
		switch f := f.(type) {
		case *cli.IntFlag:
			f.Usage += " " + r.describe(dur)
		case *cli.Uint64Flag:
			f.Usage += " " + r.describe(dur)
		case *cli.Float64Flag:
			f.Usage += " " + r.describe(dur)
		case *cli.DurationFlag:
			f.Usage += " " + r.describe(dur)
		}
	}
	return flags
}

// describe is the rule as the help shows it: "(1 to 1000; 0: none)".
func (r numberRule) describe(dur bool) string {
	var b strings.Builder
	b.WriteString("(")
	switch {
	case r.min == 0 && r.max == math.MaxUint64:
		b.WriteString("any value")
	case r.max > 0:
		fmt.Fprintf(&b, "%s to %s", r.text(r.min, dur), r.text(r.max, dur))
		if r.maxWhy != "" {
			fmt.Fprintf(&b, ", %s", r.maxWhy)
		}
	case r.min == math.SmallestNonzeroFloat64:
		b.WriteString("more than 0")
	default:
		fmt.Fprintf(&b, "at least %s", r.text(r.min, dur))
	}
	for _, v := range r.special() {
		fmt.Fprintf(&b, "; %s: %s", r.text(v, dur), r.means[v])
	}
	b.WriteString(")")
	return b.String()
}

func (r numberRule) special() []float64 {
	vs := make([]float64, 0, len(r.means))
	for v := range r.means {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

func (r numberRule) text(v float64, dur bool) string {
	if dur {
		return time.Duration(v * float64(time.Second)).String()
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// checkNumbers applies numberRules to every number flag of the command.
func checkNumbers(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		r, ok := numberRules()[name]
		if !ok {
			continue
		}
		var v float64
		var shown string
		dur := false
		switch f.(type) {
		case *cli.IntFlag:
			v, shown = float64(c.Int(name)), strconv.Itoa(c.Int(name))
		case *cli.Uint64Flag:
			v, shown = float64(c.Uint64(name)), strconv.FormatUint(c.Uint64(name), 10)
		case *cli.Float64Flag:
			v, shown = c.Float64(name), strconv.FormatFloat(c.Float64(name), 'g', -1, 64)
		case *cli.DurationFlag:
			v, shown, dur = c.Duration(name).Seconds(), c.Duration(name).String(), true
		default:
			continue
		}
		if _, special := r.means[v]; special {
			continue
		}
		if v >= r.min && (r.max == 0 || v <= r.max) {
			continue
		}
		return cliutil.Usagef("--%s %s is refused: it takes %s", name, shown, strings.TrimSuffix(strings.TrimPrefix(r.describe(dur), "("), ")"))
	}
	return nil
}
