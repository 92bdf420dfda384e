package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
)

// TestCodecNegotiation: the host compresses with its configured codec for
// joiners that list it, and with gzip for those that do not (a protocol
// 3 joiner lists none); a join point then holds one copy per codec, the
// second transcoded from the first, and both joiners end in sync.
func TestCodecNegotiation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		host     string
		protocol uint32
		codecs   []uint8
		want     snapshot.Codec
	}{
		{"default host, current joiner", "", 0, nil, snapshot.Zstd},
		{"default host, protocol 3 joiner", "", 3, nil, snapshot.Gzip},
		{"default host, joiner reading gzip only", "", 0, []uint8{uint8(snapshot.Gzip)}, snapshot.Gzip},
		{"gzip host, current joiner", "gzip", 0, nil, snapshot.Gzip},
		{"zstd host, joiner listing an unknown codec first", "zstd", 0, []uint8{9, uint8(snapshot.Zstd)}, snapshot.Zstd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, host.Config{Join: host.JoinConfig{Compression: tc.host}}, locksteptest.New(3, 5000))
			opt := jointest.Options{Protocol: tc.protocol, Codecs: tc.codecs}
			ctx, cancel := context.WithTimeout(jointest.With(context.Background(), opt), time.Minute)
			defer cancel()
			s, err := join.Join(ctx, joinCfg(h.addr, "Codec", newHashLog()))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.Timings().Codec; got != tc.want {
				t.Fatalf("joined with %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCompressionValidated(t *testing.T) {
	for _, tc := range []struct {
		compression string
		ok          bool
	}{
		{"lzma", false}, {"gzip:12", false}, {"zstd:x", false},
		{"zstd", true}, {"gzip", true}, {"zstd:10", true}, {"gzip:-2", true}, {"", true},
	} {
		err := host.Config{Join: host.JoinConfig{Compression: tc.compression}}.Defaults().Validate()
		if (err == nil) != tc.ok {
			t.Errorf("compression %q: %v, want accepted %v", tc.compression, err, tc.ok)
		}
	}
}
