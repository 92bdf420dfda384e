package main

import (
	"os"
	"testing"
)

// TestMain runs the tests with port mapping off for every host they start
// (LOCKHOST_PORT_MAPPING, read by host serve): no test asks a real router.
func TestMain(m *testing.M) {
	os.Setenv("LOCKHOST_PORT_MAPPING", "off")
	os.Exit(m.Run())
}
