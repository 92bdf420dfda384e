package main

import (
	"fmt"

	"github.com/lockhost/lockhost/defs"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
)

// printDefsDetail prints which defs and mods differ from the host's: the
// same report as "defs diff", from the detail the host sent with the
// refusal, or the per-database statuses when there is no detail.
func printDefsDetail(re *join.RejectedError, bundle *gamecontent.Bundle) {
	if rep, err := join.DefsReport(re, bundle.Set); err == nil {
		rep.WriteText(stderr, "host", "this machine")
		return
	}
	sum := bundle.Summary()
	if len(re.Statuses) < len(sum) {
		fmt.Fprintln(stderr, "The host reported def differences but not per database.")
		return
	}
	fmt.Fprintln(stderr, "Def databases that differ from the host's:")
	for i, st := range re.Statuses[:len(sum)] { // then one Missing per undeclared host database
		if defs.Status(st) == defs.StatusOK {
			continue
		}
		fmt.Fprintf(stderr, "  %-28s %-10s (this machine: %d defs, hash %016x)\n", sum[i].Type, defs.Status(st), sum[i].Count, sum[i].Hash)
	}
}
