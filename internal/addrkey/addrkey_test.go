package addrkey

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"not an address", "not an address"},
	} {
		if got := Of(tc.in); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOfHostPort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7:30502", "192.0.2.7"},
		{"[2001:db8:1:2::9]:443", "2001:db8:1:2::/64"},
		{"192.0.2.7", "192.0.2.7"},
	} {
		if got := OfHostPort(tc.in); got != tc.want {
			t.Errorf("OfHostPort(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.0/24"},
		{"192.0.2.250", "192.0.2.0/24"},
		{"::ffff:192.0.3.7", "192.0.3.0/24"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"not an address", "not an address"},
	} {
		if got := Prefix(tc.in); got != tc.want {
			t.Errorf("Prefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
