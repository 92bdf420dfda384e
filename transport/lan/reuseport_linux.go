package lan

import "golang.org/x/sys/unix"

// reusePort is SO_REUSEPORT: several hosts on one machine then share the
// discovery port, and each receives every broadcast and multicast probe.
func reusePort() int { return unix.SO_REUSEPORT }
