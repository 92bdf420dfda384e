// Package cliutil holds what the host and join command-line tools share:
// exit codes, argument order, logging setup and loading game content.
package cliutil
