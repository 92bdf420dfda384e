package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/wire"
)

// stateCollector reads a Source at each scrape.
type stateCollector struct {
	src Source
	now func() time.Time

	bytesSent, commands, repairs, resyncs, checkpoints, skipped, hashReports, unchecked, joinPoints, admin *prometheus.Desc
	refused, chats, departures                                                                             *prometheus.Desc
	pending, evicted, pwChecks, guessRefused, puzzles, puzzleBits                                          *prometheus.Desc
	online, tick, speed, tps, holding, maxLag, behind, latency, age                                        *prometheus.Desc
	unverified, unverifiedDrops                                                                            *prometheus.Desc
	relayDecided                                                                                           *prometheus.Desc
	rejoins, rejoinFallbacks, rejoinReplayed, windowBytes, windowCommands                                  *prometheus.Desc
}

func newStateCollector(src Source) *stateCollector {
	d := prometheus.NewDesc
	return &stateCollector{
		src: src,
		now: time.Now,

		bytesSent:   d("lockhost_bytes_sent_total", "Bytes written to every client connection.", nil, nil),
		commands:    d("lockhost_commands_total", "Player commands the session accepted or refused (result: accepted, refused).", []string{"result"}, nil),
		repairs:     d("lockhost_desync_repairs_total", "Desync repairs that ended with matching hashes.", nil, nil),
		resyncs:     d("lockhost_resyncs_started_total", "Desync repairs started, by scope: map (one map or more) or world (the whole world).", []string{"scope"}, nil),
		checkpoints: d("lockhost_checkpoints_total", "State-hash checkpoints the host took of its own state.", nil, nil),
		skipped:     d("lockhost_checkpoints_skipped_total", "State-hash checkpoints dropped because hashing fell behind.", nil, nil),
		hashReports: d("lockhost_hash_reports_total", "Client state-hash reports compared with the host's.", nil, nil),
		unchecked:   d("lockhost_hash_reports_unchecked_total", "Client state-hash reports not compared: the host has no checkpoint for their tick (skipped, or taken while nobody was ready), or too many were waiting for it.", nil, nil),
		relayDecided: d("lockhost_relay_checkpoints_decided_total", "A relay session's checkpoints decided by its players while no arbiter was active, by outcome: majority (a strict majority's hashes were the reference) or none (no majority: nobody compared).",
			[]string{"outcome"}, nil),
		joinPoints: d("lockhost_join_points_total", "Join points by stage: cut (frozen on the session goroutine) or built (encoded and compressed).", []string{"stage"}, nil),
		refused:    d("lockhost_commands_refused_total", "Player commands refused, by reason: rate (over the player's command rate), spectator (sent by a spectator), invalid (too large, a reserved kind, or refused by the game).", []string{"reason"}, nil),
		chats:      d("lockhost_chat_messages_total", "Chat lines by result: relayed (to everyone; the host's own included) or refused (over the chat rate).", []string{"result"}, nil),
		departures: d("lockhost_players_departed_total", "Players who went, by how: left (on purpose, with a leave) or dropped (connection lost, timed out, or dropped by the host).", []string{"how"}, nil),
		admin:      d("lockhost_admin_actions_total", "Admin actions done (kick, ban, unban, say, save, speed, pause, resume, shutdown) from the console, RCON or the Go API.", nil, nil),

		pending:      d("lockhost_pending_connections", "Connections not admitted yet (TLS, handshake, username), now.", nil, nil),
		evicted:      d("lockhost_pending_evicted_total", "Connections not admitted yet that were closed to make room for a newcomer (the one that had done least for longest).", nil, nil),
		pwChecks:     d("lockhost_password_checks_total", "Session passwords checked, by result: right or wrong.", []string{"result"}, nil),
		guessRefused: d("lockhost_password_guesses_refused_total", "Password attempts refused unchecked: over an address's rate, the puzzle not solved, or over the bound for all addresses.", nil, nil),
		puzzles:      d("lockhost_password_puzzles_issued_total", "Password puzzles (proofs of work) set to joiners while guesses came faster than the host's budget.", nil, nil),
		puzzleBits:   d("lockhost_password_puzzle_difficulty", "The difficulty, in leading zero bits, of the password puzzle a newcomer gets now (0: none).", nil, nil),

		online:          d("lockhost_players_online", "Players online, by role (player or spectator).", []string{"role"}, nil),
		tick:            d("lockhost_session_tick", "The session's current tick.", nil, nil),
		speed:           d("lockhost_session_speed", "The game speed: 0 paused, 1 normal, more is faster.", nil, nil),
		tps:             d("lockhost_ticks_per_second", "Ticks simulated over the last second, as measured.", nil, nil),
		holding:         d("lockhost_session_holding", "1 while time is held for a lagging player, else 0.", nil, nil),
		maxLag:          d("lockhost_tick_lag_max_ticks", "The most ticks any player in the game (not still joining or downloading) trails the host by.", nil, nil),
		behind:          d("lockhost_player_ticks_behind", "Ticks each online player's reported tick trails the host's, by player name.", []string{"player"}, nil),
		latency:         d("lockhost_player_latency_seconds", "Each online player's smoothed keepalive round trip, by player name (absent until measured).", []string{"player"}, nil),
		unverified:      d("lockhost_players_unverified", "Playing clients that have reported no state hashes for two hash intervals past the lag limit: the host cannot check their game.", nil, nil),
		unverifiedDrops: d("lockhost_players_unverified_dropped_total", "Players dropped for reporting no state hashes (--drop-unverified).", nil, nil),
		rejoins: d("lockhost_rejoins_total", "Rejoins of players past WorldReady, by how: held (from the world they held, sent the commands they missed) or downloaded (sent the world).",
			[]string{"how"}, nil),
		rejoinFallbacks: d("lockhost_rejoin_fallbacks_total", "Held-world rejoins the host turned down and sent the world instead, by reason (window, ahead, unchecked, hashes, repair, too_large, not_playing).",
			[]string{"reason"}, nil),
		windowBytes:    d("lockhost_rejoin_window_bytes", "Memory of the rejoin window: the commands kept for players who rejoin from the world they held (payloads and 64 bytes each).", nil, nil),
		windowCommands: d("lockhost_rejoin_window_commands", "Commands in the rejoin window.", nil, nil),
		rejoinReplayed: d("lockhost_rejoin_replayed_bytes_total", "Bytes of the commands replayed to players rejoining from the world they held.", nil, nil),
		age:            d("lockhost_overview_age_seconds", "Time since the session goroutine last published its state; it grows when that goroutine stalls.", nil, nil),
	}
}

// collectRejoins sends the rejoin counters: held, downloaded, and the
// held worlds turned down by reason.
func (c *stateCollector) collectRejoins(ch chan<- prometheus.Metric, o host.Overview) {
	st := o.Stats
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	ch <- prometheus.MustNewConstMetric(c.windowBytes, prometheus.GaugeValue, float64(o.Window.Bytes))
	ch <- prometheus.MustNewConstMetric(c.windowCommands, prometheus.GaugeValue, float64(o.Window.Commands))
	counter(c.rejoins, float64(st.RejoinsHeld), "held")
	counter(c.rejoins, float64(st.RejoinsDownloaded), "downloaded")
	counter(c.rejoinReplayed, float64(st.RejoinReplayedBytes))
	for r, n := range st.RejoinFallbacks {
		if wire.RejoinResult(r).Fallback() {
			counter(c.rejoinFallbacks, float64(n), wire.RejoinResult(r).String())
		}
	}
}

func (c *stateCollector) descs() []*prometheus.Desc {
	return []*prometheus.Desc{c.bytesSent, c.commands, c.repairs, c.resyncs, c.checkpoints, c.skipped, c.hashReports, c.unchecked,
		c.joinPoints, c.refused, c.chats, c.departures, c.admin, c.pending, c.evicted, c.pwChecks, c.guessRefused, c.puzzles, c.puzzleBits, c.online, c.tick, c.speed, c.tps, c.holding, c.maxLag, c.behind, c.latency, c.age,
		c.unverified, c.unverifiedDrops, c.relayDecided, c.rejoins, c.rejoinFallbacks, c.rejoinReplayed,
		c.windowBytes, c.windowCommands}
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one Overview per scrape.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	o := c.src.Overview()
	st := o.Stats
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(c.bytesSent, float64(st.BytesSent))
	counter(c.commands, float64(st.Commands), "accepted")
	counter(c.commands, float64(st.CommandsRefused), "refused")
	counter(c.repairs, float64(st.Repaired))
	counter(c.resyncs, float64(st.MapResyncs), "map")
	counter(c.resyncs, float64(st.WorldResyncs), "world")
	counter(c.checkpoints, float64(st.Checkpoints))
	counter(c.skipped, float64(st.CheckpointsSkipped))
	counter(c.hashReports, float64(st.HashReports))
	counter(c.unchecked, float64(st.HashReportsUnchecked))
	counter(c.relayDecided, float64(st.MajorityCheckpoints), "majority")
	counter(c.relayDecided, float64(st.NoMajority), "none")
	counter(c.joinPoints, float64(st.JoinPoints), "cut")
	counter(c.joinPoints, float64(st.Built), "built")
	counter(c.refused, float64(st.RefusedRate), "rate")
	counter(c.refused, float64(st.RefusedSpectator), "spectator")
	counter(c.refused, float64(st.RefusedInvalid), "invalid")
	counter(c.chats, float64(st.Chats), "relayed")
	counter(c.chats, float64(st.ChatsRefused), "refused")
	counter(c.departures, float64(st.Leaves), "left")
	counter(c.departures, float64(st.Drops), "dropped")
	counter(c.admin, float64(st.AdminActions))
	counter(c.unverifiedDrops, float64(st.UnverifiedDrops))
	c.collectRejoins(ch, o)
	gauge(c.pending, float64(st.Pending))
	counter(c.evicted, float64(st.PendingEvicted))
	counter(c.pwChecks, float64(st.PasswordChecks-st.PasswordsWrong), "right")
	counter(c.pwChecks, float64(st.PasswordsWrong), "wrong")
	counter(c.guessRefused, float64(st.GuessesRefused))
	counter(c.puzzles, float64(st.PuzzlesIssued))
	gauge(c.puzzleBits, float64(st.PuzzleBits))

	gauge(c.tick, float64(o.Tick))
	gauge(c.speed, float64(o.Speed))
	gauge(c.tps, o.TicksPerSecond)
	gauge(c.holding, boolValue(o.Holding))
	if !o.At.IsZero() {
		gauge(c.age, c.now().Sub(o.At).Seconds())
	}

	var players, spectators, unverified int
	var maxLag uint64
	seen := make(map[string]bool, len(o.Players))
	for _, p := range o.Players {
		if p.Spectator {
			spectators++
		} else {
			players++
		}
		if p.Unverified {
			unverified++
		}
		if p.Status != "joining" && p.Status != "downloading" {
			maxLag = max(maxLag, p.TicksBehind)
		}
		// Names are unique among the players online; a duplicate would
		// make the whole scrape fail, so it is skipped rather than trusted.
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		gauge(c.behind, float64(p.TicksBehind), p.Name)
		if p.Latency > 0 {
			gauge(c.latency, p.Latency.Seconds(), p.Name)
		}
	}
	gauge(c.online, float64(players), "player")
	gauge(c.online, float64(spectators), "spectator")
	gauge(c.maxLag, float64(maxLag))
	gauge(c.unverified, float64(unverified))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
