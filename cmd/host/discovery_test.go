package main

import (
	"testing"

	"github.com/urfave/cli/v2"
)

// TestTestHostsAnswerNoDiscovery: every host the tests run, in this
// process or as a child, reads --discovery-port from the environment
// TestMain sets, and so answers no LAN discovery: none is listed by a
// player's join discover on the real port 30501 (where join NAME would
// then find two hosts of one name).
func TestTestHostsAnswerNoDiscovery(t *testing.T) {
	got := 0
	app := &cli.App{Name: "host", Flags: serveFlags(), Action: func(c *cli.Context) error {
		got = c.Int("discovery-port")
		return nil
	}}
	if err := app.Run([]string{"host"}); err != nil {
		t.Fatal(err)
	}
	if got != -1 {
		t.Fatalf("a test's host reads --discovery-port %d, want -1 (off)", got)
	}
}
