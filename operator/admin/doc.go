// Package admin is the host operator's command set: one table of commands
// (players, kick, ban, unban, bans, say, save, pause, resume, speed,
// shutdown, help), each with its help text, run against a live session
// through the admin methods of host.Server. The same commands serve every
// way in: the host's console (RunConsole reads lines from a terminal or
// any reader), Source RCON (package rcon hands each command line to
// Commands.Exec), and Go programs, which may call Exec or the host.Server
// methods directly. Every command names who ran it ("console", "rcon
// ADDR", "api"), and the host logs each action with that name.
package admin
