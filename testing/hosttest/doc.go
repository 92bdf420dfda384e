// Package hosttest starts a lockhost host on loopback for a test, with
// the settings a test on one machine needs, and joins it. It imports
// host and join, so only tests outside package host (host_test, cmd/*,
// metrics, web...) may use it; helpers without the host are in testkit.
package hosttest
