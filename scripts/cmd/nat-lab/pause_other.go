//go:build !unix

package main

import "errors"

// pause needs job-control signals; the lab runs on Linux only.
func pause(*proc) error { return errors.New("nat-lab runs on Linux only") }

// resume needs job-control signals too.
func resume(*proc) error { return errors.New("nat-lab runs on Linux only") }
