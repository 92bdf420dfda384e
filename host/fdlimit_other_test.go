//go:build !unix

package host_test

import "testing"

// needDescriptors does nothing where the descriptor limit is not a
// process's rlimit.
func needDescriptors(*testing.T, uint64) {}
