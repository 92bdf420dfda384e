// Command peakrss runs a command and prints its peak resident set size:
//
//	go run ./scripts/cmd/peakrss host saves inspect big.lhsave
//
// The command's output and exit code pass through; the figure goes to
// standard error as "peakrss: N KiB" (to -o FILE instead, for tests).
//
// Why a separate small process: on Linux a child started by a large
// process (a test binary, say) reports in getrusage the larger of its own
// peak and its parent's at the moment it was started (Go starts children
// with vfork, sharing the parent's memory until exec). Started from this
// small program, the figure is the command's own peak, or this program's
// few MiB if that is larger: never less than the truth.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	out := flag.String("o", "", "write the peak RSS in KiB to `FILE` instead of standard error")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: peakrss [-o FILE] COMMAND [ARG...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "peakrss: %v\n", err)
		os.Exit(127)
	}
	kib, ok := peakKiB(cmd.ProcessState)
	if !ok {
		fmt.Fprintln(os.Stderr, "peakrss: this OS does not report a child's peak RSS")
		os.Exit(127)
	}
	if *out != "" {
		if err := os.WriteFile(*out, fmt.Appendf(nil, "%d\n", kib), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "peakrss: %v\n", err)
			os.Exit(127)
		}
	} else {
		fmt.Fprintf(os.Stderr, "peakrss: %d KiB\n", kib)
	}
	os.Exit(code)
}
