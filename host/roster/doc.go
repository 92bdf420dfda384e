// Package roster keeps the players of a session: username rules, admission
// (name taken, session full), statuses, factions and the notices a join or
// leave produces. It is plain data owned by one goroutine; it does no I/O.
package roster
