package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// The thin-join peak (-thin-peak): the host's peak memory (VmHWM) over
// one join that makes the maps' terrain (--make-terrain always: the host
// builds the join point's thin map blobs for it) and then two that
// download everything, on a world of -world-mib, -runs times, each on a
// host of its own. It prints the host's peak before the joins (its first
// join point built) and after each, with how many join points and thin
// blob sets the host built. Joiners run one after the other at nice 19.
// OpenTTD's server peak on the same raw size is what -openttd prints.
//
// Measured on the 204 MiB world, two cores shared with other work (load
// average 12 to 27), runs interleaved, the builds before and after thin
// blobs were built only for matching hashes and let go once their
// point's joiners were in: host up 374-384 MiB; peak after the three
// joins 487, 503, 477 MiB before, 491, 481, 490 MiB after (OpenTTD's
// server 496 MiB on 4096², measured elsewhere; OpenTTD was not installed
// here). No difference shows: one thin set is 12 MB, and the peak is set
// by the join points the host cuts and builds (3 or 4 a run: under that
// load a build took 6 to 37 s, longer than the 10 s a point may age, so
// a point prepared ahead expired as it was built), each a clone of the
// world beside the world itself.

// thinPeak runs the -thin-peak measurement.
func (b *bench) thinPeak(worldMiB, runs int) error {
	w := world{flags: []string{"--world-mib", strconv.Itoa(worldMiB), "--seed", "1"}}
	fmt.Printf("host peak (VmHWM) over one thin join and two whole joins, %d MiB world, %d runs\n", worldMiB, runs)
	fmt.Printf("%-4s %8s %8s %8s %8s %7s %7s\n", "run", "up MiB", "thin", "whole", "whole", "points", "thins")
	for run := 1; run <= runs; run++ {
		h, err := b.startHost(w, false)
		if err != nil {
			return err
		}
		peaks := []int64{h.peakRSS()}
		for i, how := range []string{"always", "never", "never"} {
			name := fmt.Sprintf("Peak%d", i)
			cmd := exec.Command("nice", "-n", "19", b.joiner, h.addr, "--name", name, "--exit-after-ready", "-q", "--timeout", "10m", "--make-terrain", how)
			if _, err := b.runJoin(cmd, name); err != nil {
				h.stop()
				return err
			}
			peaks = append(peaks, h.peakRSS())
		}
		points, thins := strings.Count(h.logs.String(), `"msg":"join point built"`), strings.Count(h.logs.String(), `"msg":"thin map blobs built"`)
		h.stop()
		fmt.Printf("%-4d %8.0f %8.0f %8.0f %8.0f %7d %7d\n", run, float64(peaks[0])/1024, float64(peaks[1])/1024,
			float64(peaks[2])/1024, float64(peaks[3])/1024, points, thins)
	}
	fmt.Println("  up: the host's peak once its first join point is built; then its peak after each join, in order.")
	fmt.Println("  points, thins: join points and thin map blob sets the host built in the run. OpenTTD's server: -openttd.")
	return nil
}
