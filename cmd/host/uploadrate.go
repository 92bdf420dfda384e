package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/host"
	"github.com/urfave/cli/v2"
)

// rateUnits are the units --max-upload-rate takes, in bytes each: bits
// and bytes with decimal prefixes, bytes with binary ones. A bare number
// is bytes.
var rateUnits = map[string]float64{
	"": 1, "B": 1,
	"bit": 1.0 / 8, "Kbit": 1e3 / 8, "kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8,
	"KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
}

// parseRate reads a rate per second such as "8Mbit", "1MiB", "500KiB/s"
// or "250000" (bytes), in bytes per second; "-1" is no cap (-1).
func parseRate(s string) (float64, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if s == "-1" {
		return -1, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	unit, ok := rateUnits[strings.TrimSpace(s[i:])]
	if err != nil || !ok || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a rate: give a number of bytes per second or one with a unit, such as 8Mbit, 500KiB or 1MB (-1: no cap)", s)
	}
	return n * unit, nil
}

// uploadRate is --max-upload-rate in bytes per second (-1: no cap), or a
// usage error naming the option.
func uploadRate(c *cli.Context) (float64, error) {
	r, err := parseRate(c.String("max-upload-rate"))
	if err != nil {
		return 0, cliutil.Usagef("--max-upload-rate: %v", err)
	}
	if r != -1 && r < host.MinUploadRate {
		return 0, cliutil.Usagef("--max-upload-rate %s is refused: at least %d bytes per second (1KiB), or -1 for no cap", c.String("max-upload-rate"), host.MinUploadRate)
	}
	return r, nil
}
