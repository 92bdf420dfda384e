package join

import (
	"errors"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/wire"
)

// ErrNoDetail reports a Defs refusal that carried no per-def detail.
var ErrNoDetail = errors.New("the host sent no per-def detail")

// DefsReport explains a Defs refusal: it diffs the host's manifest of the
// differing databases (sent with the refusal) against the same databases
// of local, naming every def and mod that differs. The host is side A.
func DefsReport(re *RejectedError, local *defs.Set) (*defs.Report, error) {
	if re.Reason != wire.ReasonDefs || len(re.Detail) == 0 {
		return nil, ErrNoDetail
	}
	hostM, err := defs.UnmarshalDetail(re.Detail)
	if err != nil {
		return nil, err
	}
	// The differing types: those the host sent, and those this client
	// declared that the host marked as not OK.
	var types []string
	for _, d := range hostM.Databases {
		types = append(types, d.Type)
	}
	sum := local.Summary()
	if len(re.Statuses) >= len(sum) { // then one Missing per undeclared host database
		for i, st := range re.Statuses[:len(sum)] {
			if defs.Status(st) != defs.StatusOK {
				types = append(types, sum[i].Type)
			}
		}
	}
	return defs.Diff(hostM, local.Manifest().Only(types)), nil
}
