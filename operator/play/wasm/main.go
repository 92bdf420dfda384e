//go:build js && wasm

// Command wasm is the browser player: the join library compiled to
// WebAssembly, joining over WebSocket (transport/ws) and drawing the
// colony from its own lockstep copy onto the page's canvas. The /play
// page (package operator/play) loads it and drives it through the
// functions it puts on globalThis.lockhost:
//
//	join(opts)          join the session: opts.url (the host's /ws URL),
//	                    name, password, spectate, bot (commands a second),
//	                    canvas (the element to draw on), debug (adds corrupt);
//	                    or, with opts.invite (+CODE) and opts.coordinator
//	                    (its URL), the host registered as that code,
//	                    through the coordinator's signalling and the
//	                    browser's RTCPeerConnection (invite.go)
//	state()             the player's state as JSON: phase, progress, timings,
//	                    maps, players, desync counters, and where the host's
//	                    mods came from (content: built in, Cache Storage,
//	                    fetched)
//	log(since)          the log lines (chat, notices, desyncs, answers)
//	                    after number since, as JSON
//	view(map)           show map map
//	click(x, y, r, m)   a click on cell x, y (pawns within r cells count)
//	                    in mode m: "select" (select a pawn or move the
//	                    selected one there) or "spawn THING COUNT"
//	command(line)       a typed line, as the join tool reads it (help)
//	leave(why)          leave the session for good, now (the page calls it
//	                    on pagehide): Client_Leave, then the WebSocket
//	                    closed with the normal code
//	replay(opts)        watch a recording instead: opts.url (where the host
//	                    serves it, /play/replays/NAME), name, canvas; it is
//	                    fetched, replayed from its start save with every
//	                    command at its tick and every checkpoint checked
//	                    (package replay, the code host replay verify runs),
//	                    and drawn as a live session is
//	play(), pause()     play or pause the replay
//	speed(x)            its speed: x times the recording's tick rate, 0 as
//	                    fast as the browser runs it
//	corrupt(map)        (debug only) change this browser's copy of map, so
//	                    the host's hash check finds it and repairs it
//
// Before it joins, it asks the host for its content manifest (GET
// /content/manifest on the page's own origin): a host that shares its mods
// answers it, and the player takes each shared file from its built-in
// content, from the page's Cache Storage (a visit before) or from the
// host by hash, checks every one's SHA-256 and loads them with the join
// tool's code (modsync.MemLoader, gamecontent.LoadFS); a host that shares
// none answers 404 and the built-in content is used.
//
// Like the join tool, it reports state hashes at the host's checkpoints
// and takes repairs in: that is the join library's own doing.
package main

import (
	"syscall/js"

	"github.com/lockhost/lockhost/internal/gcpolicy"
)

func main() {
	gcpolicy.ApplyJoin() // a world held in the page's memory, as in the join tool's
	c := newClient()
	api := js.Global().Get("Object").New()
	fn := func(name string, f func(args []js.Value) any) {
		api.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) }))
	}
	fn("join", func(a []js.Value) any { c.start(optionsOf(arg(a, 0))); return nil })
	fn("state", func([]js.Value) any { return c.stateJSON() })
	fn("log", func(a []js.Value) any { return c.logJSON(arg(a, 0).Int()) })
	fn("view", func(a []js.Value) any { c.view(int32(arg(a, 0).Int())); return nil })
	fn("click", func(a []js.Value) any {
		c.click(arg(a, 0).Int(), arg(a, 1).Int(), arg(a, 2).Int(), arg(a, 3).String())
		return nil
	})
	fn("command", func(a []js.Value) any { c.command(arg(a, 0).String()); return nil })
	fn("leave", func(a []js.Value) any {
		why := "the page was closed"
		if v := arg(a, 0); v.Type() == js.TypeString {
			why = v.String()
		}
		c.leave(why)
		return nil
	})
	fn("replay", func(a []js.Value) any {
		o := arg(a, 0)
		c.startReplay(replayOptions{url: o.Get("url").String(), name: o.Get("name").String(), canvas: o.Get("canvas")})
		return nil
	})
	fn("play", func([]js.Value) any { c.setPlaying(true); return nil })
	fn("pause", func([]js.Value) any { c.setPlaying(false); return nil })
	fn("speed", func(a []js.Value) any { c.setSpeed(arg(a, 0).Float()); return nil })
	fn("corrupt", func(a []js.Value) any { return c.corrupt(int32(arg(a, 0).Int())) })
	js.Global().Set("lockhost", api)
	js.Global().Call("dispatchEvent", js.Global().Get("Event").New("lockhost-ready"))
	select {}
}

// arg is argument i, or undefined.
func arg(a []js.Value, i int) js.Value {
	if i < len(a) {
		return a[i]
	}
	return js.Undefined()
}

// options are what the page passes to join.
type options struct {
	url, name, password string
	// coordinator and invite, when set, reach the host by its invite
	// code through the coordinator at that URL (the page's origin)
	// instead of url: WebRTC, for a host whose own HTTP is out of reach.
	coordinator, invite string
	spectate, debug     bool
	bot                 float64
	canvas              js.Value
}

func optionsOf(o js.Value) options {
	str := func(k string) string {
		if v := o.Get(k); v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}
	num := func(k string) float64 {
		if v := o.Get(k); v.Type() == js.TypeNumber {
			return v.Float()
		}
		return 0
	}
	return options{url: str("url"), coordinator: str("coordinator"), invite: str("invite"), name: str("name"), password: str("password"),
		spectate: o.Get("spectate").Truthy(), debug: o.Get("debug").Truthy(), bot: num("bot"), canvas: o.Get("canvas")}
}
