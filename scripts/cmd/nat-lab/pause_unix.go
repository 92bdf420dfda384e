//go:build unix

package main

import "syscall"

// pause stops p without ending it (SIGSTOP): it answers nothing until
// resume.
func pause(p *proc) error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// resume lets a paused p run again.
func resume(p *proc) error { return p.cmd.Process.Signal(syscall.SIGCONT) }
