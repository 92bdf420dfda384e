package main

import (
	"fmt"
	"os"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/lockhost/lockhost/join"
)

// printDefsDetail prints which def databases differ, from the statuses the
// host sent for each database this client declared.
func printDefsDetail(re *join.RejectedError, bundle *gamecontent.Bundle) {
	sum := bundle.Summary()
	if len(re.Statuses) != len(sum) {
		fmt.Fprintln(os.Stderr, "The host reported def differences but not per database.")
		return
	}
	fmt.Fprintln(os.Stderr, "Def databases that differ from the host's:")
	for i, st := range re.Statuses {
		if defs.Status(st) == defs.StatusOK {
			continue
		}
		fmt.Fprintf(os.Stderr, "  %-28s %-10s (this machine: %d defs, hash %016x)\n", sum[i].Type, defs.Status(st), sum[i].Count, sum[i].Hash)
	}
}
