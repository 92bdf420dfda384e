package play

import (
	"os"
	"testing"
)

// TestMain runs the tests with LAN discovery off for every host they
// start (LOCKHOST_DISCOVERY_PORT, read by host serve): no player's join
// discover lists a test's host.
func TestMain(m *testing.M) {
	os.Setenv("LOCKHOST_DISCOVERY_PORT", "-1")
	os.Exit(m.Run())
}
