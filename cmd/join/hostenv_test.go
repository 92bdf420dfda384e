package main

import (
	"os"
	"testing"
)

// TestMain runs the tests with port mapping off for every host they start
// (LOCKHOST_PORT_MAPPING, read by host serve): no test asks a real router;
// and LAN discovery off (LOCKHOST_DISCOVERY_PORT): no player's join
// discover lists a test's host. The discovery tests serve on ports of
// their own.
func TestMain(m *testing.M) {
	os.Setenv("LOCKHOST_PORT_MAPPING", "off")
	os.Setenv("LOCKHOST_DISCOVERY_PORT", "-1")
	os.Exit(m.Run())
}
