// The browser player's page: it loads the WebAssembly player, which joins
// over WebSocket and draws the colony, and shows what it reports. With
// ?replay=NAME it watches the host's recording NAME instead, with play,
// pause and speed; with ?replay and no name it lists the recordings.
// Opened at a coordinator's invite link (/+CODE) it joins the host
// registered as that code through the coordinator: WebRTC, with the
// browser's own RTCPeerConnection, for a host whose HTTP is out of reach.
"use strict";
(() => {
	const $ = (id) => document.getElementById(id);
	const q = new URLSearchParams(location.search);
	const opts = {
		url: (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws",
		name: q.get("name") || "", password: "", spectate: q.get("spectate") === "1",
		bot: Number(q.get("bot") || 0), debug: q.get("debug") === "1", canvas: $("map"),
	};
	const invite = /^\/\+[2-9A-Z]{7}$/i.test(location.pathname) ? location.pathname.slice(1) : "";
	if (invite) { opts.invite = invite; opts.coordinator = location.origin; }
	const replayName = invite ? null : q.get("replay");
	let loaded = null, logSeq = 0, st = {}, shownMaps = "", shownThings = "";

	// page is what the page knows, for scripts and tests (window.lockhostPage).
	// loadMs: the player's download and compile; readyMs: from the join to
	// WorldReady; readyAt: WorldReady since the page's navigation.
	const page = { wasmBytes: 0, wasmRaw: 0, loadMs: 0, started: 0, readyMs: 0, readyAt: 0, state: () => st };
	window.lockhostPage = page;

	function status(text) { $("status").textContent = text; }

	async function loadWasm() {
		const t0 = performance.now();
		const resp = await fetch("/play/lockhost.wasm");
		if (!resp.ok) throw new Error("the player did not load: HTTP " + resp.status);
		const total = Number(resp.headers.get("X-Uncompressed-Length") || 0);
		const reader = resp.body.getReader(), parts = [];
		let got = 0;
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			parts.push(value);
			got += value.length;
			progress("download the player", got, total);
		}
		const bytes = new Uint8Array(got);
		let at = 0;
		for (const p of parts) { bytes.set(p, at); at += p.length; }
		const go = new Go();
		const ready = new Promise((res) => addEventListener("lockhost-ready", res, { once: true }));
		const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
		go.run(instance);
		await ready;
		page.wasmRaw = got;
		page.loadMs = performance.now() - t0;
		page.wasmBytes = performance.getEntriesByName(new URL("/play/lockhost.wasm", location).href)[0]?.encodedBodySize || 0;
	}

	function progress(what, done, total) {
		$("progress").hidden = false;
		$("bar").max = total || 1;
		$("bar").value = total ? done : 0;
		const pct = total ? " " + Math.floor(100 * done / total) + "%" : "";
		$("phase").textContent = what + pct;
	}

	async function load() {
		status("loading the player");
		try {
			if (!loaded) loaded = loadWasm();
			await loaded;
			return true;
		} catch (e) {
			status(String(e));
			return false;
		}
	}

	async function join() {
		$("joinform").hidden = true;
		$("replays").hidden = true;
		if (!await load()) return;
		page.started = performance.now();
		lockhost.join(opts);
	}

	// watch plays the host's recording name.
	async function watch(name) {
		document.title = "lockhost: replay " + name;
		if (!await load()) return;
		page.started = performance.now();
		lockhost.replay({ url: "/play/replays/" + encodeURIComponent(name), name: name, canvas: $("map") });
	}

	// listReplays shows the host's recordings, each a link to watch it.
	async function listReplays() {
		try {
			const resp = await fetch("/play/replays");
			if (!resp.ok) return;
			const list = (await resp.json()).replays || [];
			$("replaylist").replaceChildren(...list.map((r) => {
				const li = document.createElement("li"), a = document.createElement("a"), info = document.createElement("span");
				a.href = "/play?replay=" + encodeURIComponent(r.name);
				a.textContent = r.name;
				info.textContent = (r.bytes / 1048576).toFixed(1) + " MiB · " + r.modified.replace("T", " ").replace("Z", " UTC");
				li.append(a, info);
				return li;
			}));
			$("noreplays").hidden = list.length > 0;
			$("replays").hidden = false;
		} catch (e) {
			// The list is an extra: the join form works without it.
		}
	}

	// showReplay shows the replay's tick, speed and verdict.
	function showReplay() {
		const r = st.replay;
		$("replaybar").hidden = false;
		$("playpause").textContent = r.playing ? "pause" : "play";
		$("playpause").disabled = r.done;
		const speed = r.speed === 0 ? "as fast as possible" : r.speed + "x";
		$("replaytick").textContent = "tick " + st.tick + " of " + r.first_tick + ".." + r.last_tick +
			" · checkpoints " + r.checked + "/" + r.checkpoints;
		status("replay " + r.name + " · " + (r.done ? "ended" : r.playing ? "playing at " + speed : "paused") + " · tick " + st.tick);
		const v = $("verdict");
		if (r.failure) {
			v.hidden = false; v.className = "failed"; v.textContent = r.failure;
		} else if (r.done) {
			v.hidden = false; v.className = "";
			v.textContent = "the end of the recording at tick " + st.tick + ": all " + r.checked + " checkpoints matched" +
				(r.complete ? "" : " (the recording was cut short)");
		}
	}

	const phases = { content: "fetching the host's mods", connect: "connecting", handshake: "handshake", download: "downloading the world",
		load: "loading the world", "catch-up": "catching up" };
	const replayPhases = { download: "downloading the recording", load: "loading its start" };

	function poll() {
		if (!window.lockhost || !page.started) return;
		st = JSON.parse(lockhost.state());
		if (st.phase === "replay") {
			$("progress").hidden = true;
			$("play").hidden = false;
			$("game").textContent = st.game || "";
			$("actions").hidden = true;
			$("say").hidden = true;
			$("playershead").hidden = true;
			$("loghead").textContent = "Log";
			showMaps(); showReplay();
		} else if (st.phase === "ready") {
			if ($("play").hidden) { page.readyMs = performance.now() - page.started; page.readyAt = performance.now(); }
			$("progress").hidden = true;
			$("play").hidden = false;
			status((st.spectator ? "watching" : "playing") + " · tick " + st.tick + (st.desyncs ? " · repairs " + st.repaired + "/" + st.desyncs : ""));
			$("game").textContent = st.game || "";
			$("actions").hidden = st.spectator; // a spectator sends no commands
			showMaps(); showThings(); showPlayers();
		} else if (st.phase === "error") {
			$("progress").hidden = true;
			status(st.error);
			if (st.need_password) { $("pwlabel").hidden = false; $("joinform").hidden = false; $("name").value = opts.name; $("password").focus(); }
		} else if (phases[st.phase]) {
			const what = replayName !== null ? replayPhases[st.phase] || phases[st.phase] : phases[st.phase];
			progress(what, st.done, st.total);
			status(what);
		}
		if (st.log_seq > logSeq) showLog(JSON.parse(lockhost.log(logSeq)));
	}

	function showMaps() {
		const key = st.maps.map((m) => m.id + ":" + m.width + "x" + m.height).join(",");
		if (key !== shownMaps) {
			shownMaps = key;
			const sel = $("maps");
			sel.replaceChildren(...st.maps.map((m) => new Option("map " + m.id + " (" + m.width + "x" + m.height + ")", m.id)));
		}
		$("maps").value = st.map;
		const m = st.maps.find((m) => m.id === st.map);
		$("info").textContent = m ? m.pawns + " pawns, " + m.things + " things" + (st.selected ? " · pawn " + st.selected + " selected" : "") : "";
	}

	function showThings() {
		const key = (st.things || []).join(",");
		if (key === shownThings) return;
		shownThings = key;
		$("thing").replaceChildren(...st.things.map((t) => new Option(t, t)));
	}

	function showPlayers() {
		$("players").replaceChildren(...(st.Players || []).map((p) => {
			const li = document.createElement("li");
			li.textContent = p.Name + " · " + p.Status + (p.Spectator ? " (watching)" : "") + " · " + Math.round(p.Latency / 1e6) + " ms";
			return li;
		}));
	}

	function showLog(lines) {
		const log = $("log");
		for (const l of lines) {
			logSeq = l.seq;
			const div = document.createElement("div");
			div.className = l.kind;
			div.textContent = (l.kind === "chat" ? "<" + (l.from || "host") + "> " : "") + l.text;
			log.append(div);
		}
		while (log.childElementCount > 200) log.firstElementChild.remove();
		log.scrollTop = log.scrollHeight;
	}

	$("map").addEventListener("click", (ev) => {
		const m = st.maps && st.maps.find((m) => m.id === st.map);
		if (!m || st.spectator) return;
		const r = ev.target.getBoundingClientRect();
		const x = Math.floor((ev.clientX - r.left) * m.width / r.width);
		const y = Math.floor((ev.clientY - r.top) * m.height / r.height);
		const radius = Math.max(1, Math.ceil(6 * m.width / r.width));
		const spawn = document.querySelector("input[name=mode]:checked").value === "spawn";
		lockhost.click(x, y, radius, spawn ? "spawn " + $("thing").value + " " + ($("count").value || 1) : "select");
	});
	$("playpause").addEventListener("click", () => {
		if (st.replay && st.replay.playing) lockhost.pause(); else lockhost.play();
	});
	$("speed").addEventListener("change", () => lockhost.speed(Number($("speed").value)));
	$("maps").addEventListener("change", () => lockhost.view(Number($("maps").value)));
	$("say").addEventListener("submit", (ev) => {
		ev.preventDefault();
		lockhost.command($("line").value);
		$("line").value = "";
	});
	$("joinform").addEventListener("submit", (ev) => {
		ev.preventDefault();
		opts.name = $("name").value;
		opts.password = $("password").value;
		opts.spectate = $("spectate").checked;
		join();
	});

	// Leaving the page leaves the session: Client_Leave and a normal close
	// of the socket, so the host counts a leave and waits for nobody.
	// pagehide also comes when the page goes to the back-forward cache;
	// beforeunload is for browsers that skip pagehide. Back from that
	// cache, the page joins anew.
	let left = false;
	function leave() {
		if (left || !window.lockhost) return;
		left = true;
		lockhost.leave("the page was closed");
	}
	addEventListener("pagehide", leave);
	addEventListener("beforeunload", leave);
	addEventListener("pageshow", (ev) => { if (ev.persisted && left) location.reload(); });

	setInterval(poll, 200);
	if (replayName) watch(replayName);
	else if (replayName !== null) { status("choose a recording"); listReplays(); }
	else if (opts.name) join();
	else { $("joinform").hidden = false; status("choose a name"); $("name").focus(); if (!invite) listReplays(); }
})();
