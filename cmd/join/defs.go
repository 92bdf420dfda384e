package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/defs"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/join"
)

// printDefsDetail prints which defs and mods differ from the host's: the
// same report as "defs diff", from the detail the host sent with the
// refusal, or the per-database statuses when there is no detail.
func printDefsDetail(re *join.RejectedError, bundle *gamecontent.Bundle) {
	printMissingMods(re, bundle)
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

// printMissingMods names each of the host's mods (from the refusal's
// detail) that this machine did not load, and how to get it when the
// host shares its content.
func printMissingMods(re *join.RejectedError, bundle *gamecontent.Bundle) {
	hostM, err := defs.UnmarshalDetail(re.Detail)
	if err != nil {
		return
	}
	shares := strings.Contains(re.Message, "--fetch-content")
	for _, m := range hostM.Mods {
		if slices.ContainsFunc(bundle.Mods, func(id string) bool { return strings.EqualFold(id, m.PackageID) }) {
			continue
		}
		how := "get it and load it with --content DIR"
		if shares {
			how = "the host shares it: join again with --fetch-content"
		}
		fmt.Fprintf(stderr, "missing mod: %s (%s, version %q): %s\n", termsafe.String(m.PackageID), termsafe.String(m.Name), termsafe.String(m.Version), how)
	}
}
