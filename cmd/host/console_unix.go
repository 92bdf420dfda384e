//go:build unix

package main

import (
	"os/signal"
	"syscall"
)

// quietBackgroundRead keeps a host started in the background of a shell
// (host serve &) running when its console reads the terminal: the read
// fails, and the console stops, instead of the host being stopped.
func quietBackgroundRead() { signal.Ignore(syscall.SIGTTIN) }
