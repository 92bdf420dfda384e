package host

import (
	"math/rand/v2"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// botCommands is n commands of the join tool's bot (colony.RandomCommand)
// on the world of about mib MiB, stamped as a host stamps one player's
// 50 a second at 60 ticks a second.
func botCommands(t *testing.T, mib int64, n int) []lockstep.Command {
	t.Helper()
	content, _, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	w, err := colony.New(content, colony.SizedConfig(mib<<20, 1))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 0x6c6f636b))
	cmds := make([]lockstep.Command, 0, n)
	for i := 0; len(cmds) < n; i++ {
		c, ok := colony.RandomCommand(w, rng)
		if !ok {
			t.Fatal("the bot found no command")
		}
		c.Tick, c.Player = 1000+uint64(i)*60/50, 2
		cmds = append(cmds, c)
	}
	return cmds
}

// compressedPerCommand is the bytes a command of cmds takes in raw
// compressed with codec c at its default level.
func compressedPerCommand(t *testing.T, raw []byte, c snapshot.Codec, n int) float64 {
	t.Helper()
	b, err := snapshot.Compress(raw, snapshot.Compression{Codec: c})
	if err != nil {
		t.Fatal(err)
	}
	return float64(len(b.Data)) / float64(n)
}

// TestReplayCompactOnBotTraffic: a held-world rejoin's replay of the
// bot's commands (five minutes of one player at 50 a second on the 64 MiB
// world) takes at most 7 bytes a command compressed, in either codec, so
// that a five-minute drop's rejoin reads under 1% of that world's join.
// The same commands as Server_Tick frames are logged for comparison.
func TestReplayCompactOnBotTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the 64 MiB world")
	}
	cmds := botCommands(t, 64, 15000)
	raw, ok := replayRaw(cmds, 1, wire.MaxReplayRaw)
	if !ok {
		t.Fatal("the replay was refused")
	}
	var frames []byte
	for _, p := range wire.ReplayTicks(cmds, cmds[len(cmds)-1].Tick+5, 1) {
		frames = append(frames, wire.MustMarshal(p)...)
	}
	for _, c := range []snapshot.Codec{snapshot.Gzip, snapshot.Zstd} {
		got := compressedPerCommand(t, raw, c, len(cmds))
		t.Logf("%s: %.2f bytes a command (%.2f raw); as Server_Tick frames %.2f (%.2f raw)", c, got,
			float64(len(raw))/float64(len(cmds)), compressedPerCommand(t, frames, c, len(cmds)), float64(len(frames))/float64(len(cmds)))
		if got > 7 {
			t.Errorf("%s: %.2f bytes a command, over 7", c, got)
		}
	}
}
