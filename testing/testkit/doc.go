// Package testkit holds helpers shared by the repository's tests that do
// not depend on the host: a quiet logger, waits for a condition, a
// loopback listener that hands its connections to the test, and a TCP
// relay that counts, stalls and cuts the connections through it.
//
// It imports nothing of lockhost, so the host's own internal tests may
// use it; starting a whole host for a test is package hosttest's job.
package testkit
