package main

import "testing"

// TestParseRate: --max-upload-rate's forms, in bytes per second.
func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"8Mbit": 1e6, "10Mbit/s": 1.25e6, "1MiB": 1 << 20, "500KiB/s": 500 << 10, "250000": 250000,
		"1.5MB": 1.5e6, "800kbit": 1e5, "-1": -1, "2GiB": 2 << 30,
	} {
		got, err := parseRate(in)
		if err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "8 parsecs", "8mbps", "1e999", "Mbit", "-2", "1..2MB"} {
		if got, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) = %v, want an error", in, got)
		}
	}
}
