// The package against the real host binary running colony: join over TCP
// and over WebSocket, count ticks, send a command and a chat line that a
// native join tool prints, leave; a password host; typed refusals.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect, createServer } from "node:net";
import { test } from "node:test";
import { decodeMsgpack, encodeMsgpack, join, Reasons, RefusedError, solvePuzzle } from "../dist/index.js";
import { binaries, logTail, run, secretFile, sleep, smallWorld, startHost, until, within } from "./helpers.js";

const SET_SPEED = 0xff00;

test("a colony host over TCP and WebSocket: ticks, a command, a chat line the join tool prints, a clean leave", { timeout: 180000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const native = run(binaries().join, [host.addr, "--name", "Native", "--no-input", "--quiet", "--no-reconnect"]);
  t.after(() => native.stop());
  await until(() => /player ready.*name=Native/.test(host.log()), "the native join tool to be ready", { detail: () => native.output() });
  for (const [via, url] of [["tcp", host.tcp], ["ws", host.ws]]) {
    const name = `Ada_${via}`;
    const s = await join(url, { name });
    assert.ok(s.world instanceof Uint8Array && s.world.length > 0, "the world's bytes");
    assert.equal(typeof s.tick, "number");
    assert.ok(s.players.some((p) => p.name === name), "the player list names us");
    assert.ok(s.players.some((p) => p.name === "Native"));
    const seen = [];
    const seen2 = [];
    s.on("tick", (tick) => seen.push(tick));
    s.on("tick", (tick) => seen2.push(tick));
    await until(() => seen.length >= 30, `30 ticks over ${via}`, { detail: () => `${seen.length} ticks; session at ${s.tick}, granted ${s.granted}` });
    assert.deepEqual(seen2.slice(0, 30), seen.slice(0, 30), "every listener sees every tick");
    for (let i = 1; i < seen.length; i++) assert.equal(seen[i], seen[i - 1] + 1, "ticks in order, none twice");
    assert.equal(seen[0], s.state.tick, "the first tick is the world's");
    const before = s.tick;
    const at = await s.send(SET_SPEED, new Uint8Array([1]));
    assert.ok(at >= before, `stamped for ${at}, sent at ${before}`);
    const text = `hello over ${via}`;
    await s.chat(text);
    await until(() => native.output().includes(`chat: <${name}> ${text}`), `the join tool to print ${name}'s chat line`, { detail: () => native.output() });
    await s.leave();
    assert.equal(s.closed, true);
    await until(() => new RegExp(`msg="player left" player=\\d+ name=${name} `).test(host.log()), `the host to log ${name}'s leave`, { detail: () => logTail(host.log, new RegExp(name)) });
    assert.doesNotMatch(host.log(), new RegExp(`msg="player dropped" player=\\d+ name=${name} `));
  }
});

test("refusals are typed with the host's reason", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  await assert.rejects(join(host.tcp, { name: "x" }), (e) => e instanceof RefusedError && e.reasonName === "UsernameLength" && e.reason === 3);
  await assert.rejects(join(host.ws, { name: "bad name!" }), (e) => e instanceof RefusedError && e.reasonName === "UsernameChars");
  const s = await join(host.tcp, { name: "Twice" });
  await assert.rejects(join(host.ws, { name: "Twice" }), (e) => e instanceof RefusedError && e.reasonName === "UsernameAlreadyOnline");
  await s.leave();
});

test("a host with a password: none and a wrong one are refused, the right one joins, as a spectator", { timeout: 120000 }, async (t) => {
  const first = await startHost(t, smallWorld);
  const pw = secretFile(first.dir, "pw", "open sesame");
  await first.stop();
  const host = await startHost(t, [...smallWorld, "--password-file", pw]);
  await assert.rejects(join(host.tcp, { name: "NoPw" }), (e) => e instanceof RefusedError && e.reasonName === "BadPassword" && e.hostMessage.length > 0);
  await assert.rejects(join(host.ws, { name: "WrongPw", password: "open barley" }), (e) => e instanceof RefusedError && e.reasonName === "BadPassword");
  const s = await join(host.ws, { name: "Watcher", password: "open sesame", spectate: true });
  const me = s.players.find((p) => p.id === s.playerId);
  assert.ok(me && me.spectator, "joined as a spectator");
  let n = 0;
  s.on("tick", () => n++);
  await until(() => n >= 10, "10 ticks as a spectator");
  await s.leave();
  await until(() => /msg="player left" player=\d+ name=Watcher /.test(host.log()), "the host to log the spectator's leave", { detail: () => logTail(host.log, /Watcher/) });
});

/**
 * One wrong password from localAddress, written frame by frame (section 6.3), the puzzle solved
 * when the host sets one, so that the host checks it: resolves with the refusal's reason.
 */
function guess(addr, localAddress, i) {
  const at = addr.lastIndexOf(":");
  return new Promise((resolve, reject) => {
    const sock = connect({ host: addr.slice(0, at), port: Number(addr.slice(at + 1)), localAddress });
    const send = (id, body) => {
      const b = encodeMsgpack(body);
      const head = Buffer.alloc(5);
      head.writeUInt32BE(b.length + 1);
      head[4] = id;
      sock.write(Buffer.concat([head, b]));
    };
    let buf = Buffer.alloc(0);
    let modList;
    sock.on("connect", () => send(0, { v: 4 }));
    sock.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const len = buf.readUInt32BE(0);
        const id = buf[4];
        const f = decodeMsgpack(buf.subarray(5, 4 + len));
        buf = buf.subarray(4 + len);
        if (id === 16) {
          send(1, { d: f.d });
          modList = f;
        } else if (id === 17) {
          const w = modList.b > 0 ? solvePuzzle(modList.c, modList.b) : undefined;
          send(2, { n: `Guess${i}`, p: randomBytes(32), r: null, s: false, w });
        } else if (id === 23) {
          send(5, { c: BigInt(Date.now()) * 1000n, n: f.n });
        } else if (id === 20) {
          sock.destroy();
          resolve(Reasons[f.r] ?? f.r);
        }
      }
    });
    sock.on("error", reject);
    sock.on("close", () => resolve("closed"));
  });
}

test("the password puzzle: past the host's budget of password checks, a joiner solves it and gets in, over TCP and WebSocket", { timeout: 180000 }, async (t) => {
  const first = await startHost(t, smallWorld);
  const pw = secretFile(first.dir, "pw", "open sesame");
  await first.stop();
  const host = await startHost(t, [...smallWorld, "--password-file", pw]);
  const stats = async () => (await (await fetch(`${host.web}/api/overview`)).json()).stats;
  // Wrong passwords, each address (in its own /24) under its burst of 10, keep the host's count of
  // checks past its free 20: every joiner is set a puzzle, a bit harder for every 4 checks more. They
  // keep it between 10 and 12 bits while the joiners below join (the count drains at 5 a second).
  const refusals = [];
  const solved = [];
  let pressing = true;
  let net = 2;
  const press = (async () => {
    while (pressing) {
      const bits = (await stats()).puzzle_bits;
      if (bits >= 12) {
        await sleep(100);
        continue;
      }
      const from = `127.0.${net++}.2`;
      assert.ok(net < 250, "out of addresses to guess from");
      const got = await Promise.all([0, 1, 2, 3].map((i) => within(guess(host.addr, from, i), `a wrong password from ${from}`, 30000)));
      refusals.push(...got);
    }
  })();
  t.after(() => (pressing = false));
  try {
    await until(async () => (await stats()).puzzle_bits >= 10, "the host to set a puzzle of 10 bits", { detail: () => `refusals: ${refusals.join(" ")}` });
    for (const [via, url] of [["tcp", host.tcp], ["ws", host.ws]]) {
      const s = await join(url, { name: `Solver_${via}`, password: "open sesame" });
      assert.ok(s.puzzleBits >= 8, `solved a puzzle of ${s.puzzleBits} bits over ${via}`);
      solved.push(`${s.puzzleBits} bits over ${via}`);
      let n = 0;
      s.on("tick", () => n++);
      await until(() => n >= 10, `10 ticks after the puzzle over ${via}`);
      await s.leave();
    }
  } finally {
    pressing = false;
    await within(press, "the wrong passwords to stop", 60000);
  }
  assert.ok(refusals.length >= 20, `${refusals.length} wrong passwords`);
  assert.deepEqual([...new Set(refusals)], ["BadPassword"], "every wrong password was checked (its puzzle solved) and refused");
  const st = await stats();
  assert.ok(st.puzzles_issued > 0 && st.password_checks >= refusals.length + 2, JSON.stringify(st));
  t.diagnostic(`${refusals.length} wrong passwords checked and refused, ${st.puzzles_issued} puzzles set; solved ${solved.join(", ")}`);
});

test("examples/count-ticks.mjs, the package alone, joins over TCP and WebSocket and says hello to a native join tool", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const native = run(binaries().join, [host.addr, "--name", "Native", "--no-input", "--quiet", "--no-reconnect"]);
  t.after(() => native.stop());
  await until(() => /player ready.*name=Native/.test(host.log()), "the native join tool to be ready", { detail: () => native.output() });
  for (const [via, url] of [["tcp", host.tcp], ["ws", host.ws]]) {
    const script = run(process.execPath, [new URL("../examples/count-ticks.mjs", import.meta.url).pathname, url, `Script_${via}`, "1"]);
    assert.equal(await within(script.exited, `count-ticks.mjs over ${via} to exit`, 90000), 0, script.output());
    const m = /^(\d+) ticks \(now at \d+\), \d+ commands; said hello$/m.exec(script.output());
    assert.ok(m && Number(m[1]) > 0, script.output());
    await until(() => native.output().includes(`chat: <Script_${via}> hello from Script_${via}: ${m[1]} ticks`), `the join tool to print Script_${via}'s hello`, { detail: () => native.output() });
  }
});

test("a TLS host: the certificate fingerprint it prints joins, another is refused before the handshake", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, [...smallWorld, "--tls"]);
  const fp = /fingerprint=(sha256:[0-9a-f]{64})/.exec(host.log())[1];
  const url = host.tcp.replace("tcp://", "tls://");
  await assert.rejects(join(url, { name: "Wrong", fingerprint: "sha256:" + "00".repeat(32) }), (e) => e.name === "ConnectionError" && /fingerprint/.test(e.message));
  const s = await join(url, { name: "Tls", fingerprint: fp });
  let n = 0;
  s.on("tick", () => n++);
  await until(() => n >= 10, "10 ticks over TLS");
  await s.leave();
  await until(() => /msg="player left" player=\d+ name=Tls /.test(host.log()), "the host to log the TLS player's leave", { detail: () => logTail(host.log, /Tls/) });
});

test("a dropped connection rejoins with the token: the listeners stay, no tick is delivered twice or missed", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const s = await join(host.ws, { name: "Dropper" });
  const ticks = [];
  const reconnects = [];
  s.on("tick", (tick) => ticks.push(tick));
  s.on("reconnect", (r) => reconnects.push(r));
  await until(() => ticks.length >= 30, "30 ticks before the drop");
  s.dropConnection();
  await until(() => reconnects.length, "the rejoin after the drop", { detail: () => logTail(host.log, /Dropper/) });
  const at = ticks.length;
  await until(() => ticks.length >= at + 60, "60 ticks after the rejoin");
  for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i], ticks[i - 1] + 1, `tick ${ticks[i]} after ${ticks[i - 1]}`);
  await until(() => /msg="player joined" .*name=Dropper .*rejoin=true/.test(host.log()), "the host to log Dropper's rejoin", { ms: 10000, detail: () => logTail(host.log, /Dropper/) });
  assert.equal(s.closed, false);
  await s.leave();
});

/**
 * A loopback proxy to addr (HOST:PORT) whose first connection is cut once `cutAt()` bytes have come
 * from the host (null: not known yet); the connections after it pass whole. Resolves with its port.
 */
function cuttingProxy(t, addr, cutAt) {
  const at = addr.lastIndexOf(":");
  let first = true;
  const srv = createServer((c) => {
    const up = connect({ host: addr.slice(0, at), port: Number(addr.slice(at + 1)) });
    const cut = first;
    first = false;
    let n = 0;
    const end = () => (c.destroy(), up.destroy());
    c.on("data", (b) => up.write(b));
    up.on("data", (b) => {
      n += b.length;
      const limit = cut ? cutAt() : null;
      if (limit !== null && n >= limit) {
        // What came before the cut reaches the client, then the connection ends.
        up.destroy();
        return c.end(b.subarray(0, b.length - (n - limit)));
      }
      c.write(b);
    });
    for (const s of [c, up]) (s.on("close", end), s.on("error", end));
  });
  t.after(() => (srv.close(), srv.unref()));
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv.address().port)));
}

test("a download cut short resumes: the rejoin names the blobs it holds and is sent the rest, over TCP and WebSocket", { timeout: 180000 }, async (t) => {
  const host = await startHost(t, ["--maps", "8", "--map-size", "250", "--things-per-map", "2000", "--pawns-per-map", "3"]);
  const sending = () => [...host.log().matchAll(/msg="sending world" .*? bytes=(\d+) raw_bytes=\d+ resumed_bytes=(\d+)/g)];
  for (const [via, target, path] of [["tcp", host.addr, ""], ["ws", host.web.replace("http://", ""), "/ws"]]) {
    const before = sending().length;
    // The first connection is cut halfway through the world it is sent.
    const port = await cuttingProxy(t, target, () => {
      const m = sending()[before];
      return m ? Math.floor(Number(m[1]) / 2) : null;
    });
    const s = await join(`${via}://127.0.0.1:${port}${path}`, { name: `Resumer_${via}` });
    const lines = sending().slice(before);
    assert.equal(lines.length, 2, `sent the world twice: ${lines.map((m) => m[0]).join("\n")}`);
    const [whole, resumed] = lines.map((m) => ({ bytes: Number(m[1]), resumed: Number(m[2]) }));
    assert.equal(whole.resumed, 0);
    assert.ok(resumed.resumed > 0 && resumed.bytes < whole.bytes, `the rejoin was sent ${resumed.bytes} of ${whole.bytes} bytes, resuming ${resumed.resumed}`);
    await until(() => new RegExp(`msg="player joined" .*name=Resumer_${via} .*rejoin=true`).test(host.log()), `the host to log Resumer_${via}'s join, a rejoin`, { detail: () => logTail(host.log, /Resumer/) });
    let n = 0;
    s.on("tick", () => n++);
    await until(() => n >= 10, `10 ticks after the resumed download over ${via}`);
    t.diagnostic(`${via}: the world of ${whole.bytes} bytes cut at half; the rejoin resumed ${resumed.resumed} bytes and was sent ${resumed.bytes}`);
    await s.leave();
  }
});

test("the heartbeat: a host silent for 30 s is given up on, and the session rejoins once it answers again", { timeout: 180000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const s = await join(host.tcp, { name: "Patient" });
  const ticks = [];
  const reconnects = [];
  const worlds = [];
  s.on("tick", (tick) => ticks.push(tick));
  s.on("reconnect", (r) => reconnects.push(r));
  s.on("world", (w) => worlds.push(w.tick));
  await until(() => ticks.length >= 30, "30 ticks before the host stops");
  // The host stops answering (its process is stopped): no keepalive, no tick, no close.
  host.proc.kill("SIGSTOP");
  t.after(() => host.proc.kill("SIGCONT"));
  const stopped = ticks.length;
  await sleep(33000);
  assert.equal(reconnects.length, 0, "nothing to rejoin while the host is stopped");
  assert.ok(ticks.length - stopped <= 2, `${ticks.length - stopped} ticks while the host was stopped`);
  host.proc.kill("SIGCONT");
  // The session gave up the silent connection at 30 s: its rejoin goes through once the host runs again.
  await until(() => reconnects.length, "the rejoin once the host answers again", { detail: () => logTail(host.log, /Patient/) });
  await until(() => new RegExp("msg=\"player joined\" .*name=Patient .*rejoin=true").test(host.log()), "the host to log Patient's rejoin", { detail: () => logTail(host.log, /Patient/) });
  const at = ticks.length;
  await until(() => ticks.length >= at + 30, "30 ticks after the rejoin");
  // The rejoin is sent the host's join point: one cut after the 33 s is past where the listeners
  // stood, and then "world" gives it to them and the ticks go on from its tick; else none is skipped.
  for (let i = 1; i < ticks.length; i++) {
    if (ticks[i] === ticks[i - 1] + 1) continue;
    assert.ok(ticks[i] > ticks[i - 1] && worlds.includes(ticks[i]), `tick ${ticks[i]} after ${ticks[i - 1]}, worlds loaded at ${worlds}`);
  }
  assert.equal(s.closed, false);
  await s.leave();
});
