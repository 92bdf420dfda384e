// The package against the real host binary running colony: join over TCP
// and over WebSocket, count ticks, send a command and a chat line that a
// native join tool prints, leave; a password host; typed refusals.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join, RefusedError } from "../dist/index.js";
import { binaries, run, secretFile, smallWorld, startHost, until } from "./helpers.js";

const SET_SPEED = 0xff00;

test("a colony host over TCP and WebSocket: ticks, a command, a chat line the join tool prints, a clean leave", { timeout: 180000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const native = run(binaries().join, [host.addr, "--name", "Native", "--no-input", "--quiet", "--no-reconnect"]);
  t.after(() => native.stop());
  await until(() => /player ready.*name=Native/.test(host.log()));
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
    await until(() => seen.length >= 30);
    assert.deepEqual(seen2.slice(0, 30), seen.slice(0, 30), "every listener sees every tick");
    for (let i = 1; i < seen.length; i++) assert.equal(seen[i], seen[i - 1] + 1, "ticks in order, none twice");
    assert.equal(seen[0], s.state.tick, "the first tick is the world's");
    const before = s.tick;
    const at = await s.send(SET_SPEED, new Uint8Array([1]));
    assert.ok(at >= before, `stamped for ${at}, sent at ${before}`);
    const text = `hello over ${via}`;
    await s.chat(text);
    await until(() => native.output().includes(`chat: <${name}> ${text}`));
    await s.leave();
    assert.equal(s.closed, true);
    await until(() => new RegExp(`msg="player left" player=\\d+ name=${name} `).test(host.log()));
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
  await until(() => n >= 10);
  await s.leave();
  await until(() => /msg="player left" player=\d+ name=Watcher /.test(host.log()));
});

test("examples/count-ticks.mjs, the package alone, joins over TCP and WebSocket and says hello to a native join tool", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const native = run(binaries().join, [host.addr, "--name", "Native", "--no-input", "--quiet", "--no-reconnect"]);
  t.after(() => native.stop());
  await until(() => /player ready.*name=Native/.test(host.log()));
  for (const [via, url] of [["tcp", host.tcp], ["ws", host.ws]]) {
    const script = run(process.execPath, [new URL("../examples/count-ticks.mjs", import.meta.url).pathname, url, `Script_${via}`, "1"]);
    assert.equal(await script.exited, 0, script.output());
    const m = /^(\d+) ticks \(now at \d+\), \d+ commands; said hello$/m.exec(script.output());
    assert.ok(m && Number(m[1]) > 0, script.output());
    await until(() => native.output().includes(`chat: <Script_${via}> hello from Script_${via}: ${m[1]} ticks`));
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
  await until(() => n >= 10);
  await s.leave();
  await until(() => /msg="player left" player=\d+ name=Tls /.test(host.log()));
});

test("a dropped connection rejoins with the token: the listeners stay, no tick is delivered twice or missed", { timeout: 120000 }, async (t) => {
  const host = await startHost(t, smallWorld);
  const s = await join(host.ws, { name: "Dropper" });
  const ticks = [];
  const reconnects = [];
  s.on("tick", (tick) => ticks.push(tick));
  s.on("reconnect", (r) => reconnects.push(r));
  await until(() => ticks.length >= 30);
  s.dropConnection();
  await until(() => reconnects.length);
  const at = ticks.length;
  await until(() => ticks.length >= at + 60);
  for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i], ticks[i - 1] + 1, `tick ${ticks[i]} after ${ticks[i - 1]}`);
  assert.match(host.log(), /msg="player joined" .*name=Dropper .*rejoin=true/);
  assert.equal(s.closed, false);
  await s.leave();
});
