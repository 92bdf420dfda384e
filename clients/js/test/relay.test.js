// Relay mode (docs/protocol.md, section 14) against the real host binary,
// the scenarios of scripts/python-relay-check with the drift game of
// examples/drift, over TCP and WebSocket: the arbiter uploads the world,
// players play in step, a joiner mid-game gets a join point from the
// arbiter, a corrupted map is repaired from the arbiter's upload, a dropped
// player rejoins from the world it holds, the arbiter leaves and a standby
// takes over; a wrong secret and a player before the world are refused.
import assert from "node:assert/strict";
import { join as pathJoin } from "node:path";
import { test } from "node:test";
import { join, RefusedError } from "../dist/index.js";
import { COMMAND_DEFS, databases, DriftGame, DriftWorld, randomCommand } from "../examples/drift/drift.js";
import { logTail, secretFile, sleep, startHost, tempDir, until } from "./helpers.js";

const SECRET = "correct horse battery";

const open = [];
/** A drift client: its game, its checkpoints (tick -> world hash) and a bot. */
async function client(url, name, opts = {}) {
  const game = new DriftGame(opts.world ?? null);
  const s = await join(url, { name, game, defs: databases(), ...opts.join });
  open.push(s);
  const c = { s, game, name, checkpoints: new Map(), ticks: [], uploads: [], desyncs: [], reconnects: [], worlds: [] };
  s.on("tick", (t) => {
    c.ticks.push(t);
    if ((t + 1) % 60 === 0) c.checkpoints.set(t + 1, game.hash().world);
  });
  s.on("upload", (u) => c.uploads.push(u));
  s.on("desync", (d) => c.desyncs.push(d));
  s.on("reconnect", (r) => c.reconnects.push(r));
  s.on("world", (w) => c.worlds.push({ tick: w.tick, hash: w.hash }));
  s.on("close", (err) => (c.closedWith = err?.message ?? "a leave"));
  if (opts.bot) {
    let seed = opts.bot;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const timer = setInterval(() => {
      if (s.closed || !game.world) return;
      const [m, k, p] = randomCommand(rnd, game.world);
      s.send(k, p, m).catch(() => {});
    }, 100);
    s.on("close", () => clearInterval(timer));
  }
  return c;
}

/** Every checkpoint both printed agrees (but the ticks named); returns how many were compared. */
function sameHashes(ref, other, except = new Set()) {
  let n = 0;
  for (const [t, h] of other.checkpoints) {
    if (!ref.checkpoints.has(t) || except.has(t)) continue;
    assert.equal(h.toString(16), ref.checkpoints.get(t).toString(16), `${other.name} differs from ${ref.name} at tick ${t}`);
    n++;
  }
  return n;
}

/** What a timed-out wait shows of the clients named: where each stands. */
function state(...cs) {
  return cs.map((c) => `${c.name}: tick ${c.s.tick}, granted ${c.s.granted}, closed ${c.s.closed}${c.closedWith ? ` (${c.closedWith})` : ""}, ${c.ticks.length} ticks, checkpoints to ${Math.max(0, ...c.checkpoints.keys())}, reconnects ${JSON.stringify(c.reconnects)}`).join("\n");
}

function consecutive(c) {
  for (let i = 1; i < c.ticks.length; i++) assert.equal(c.ticks[i], c.ticks[i - 1] + 1, `${c.name}: tick ${c.ticks[i]} after ${c.ticks[i - 1]}`);
}

test("relay mode with the drift game over TCP and WebSocket", { timeout: 300000 }, async (t) => {
  const dir = tempDir(t);
  const secret = secretFile(dir, "secret", SECRET);
  const host = await startHost(t, ["--relay", "--defs-from-arbiter", "--arbiter-secret-file", secret]);
  t.after(() => open.forEach((s) => s.close()));

  await assert.rejects(join(host.tcp, { name: "Early", game: new DriftGame() }), (e) => e instanceof RefusedError && e.reasonName === "Generic" && /no world yet/.test(e.hostMessage));
  await assert.rejects(join(host.ws, { name: "Wrong", arbiterSecret: "wrong horse battery", game: new DriftGame(DriftWorld.create(1)) }),
    (e) => e instanceof RefusedError && e.reasonName === "BadArbiterSecret");

  const arb = await client(host.tcp, "Arb", { world: DriftWorld.create(7), join: { arbiterSecret: SECRET } });
  // The join resolved at the UploadResult; the host's log line about it comes through another pipe.
  await until(() => /msg="world uploaded" tick=0 maps=3 /.test(host.log()), "the host to log the arbiter's world upload", { ms: 10000, detail: () => logTail(host.log) });
  assert.equal(arb.s.activeArbiter, true);

  await until(() => /msg="def databases declared by the arbiter" .*name=Arb databases=1 /.test(host.log()), "the host to log the arbiter's def databases", { ms: 10000, detail: () => logTail(host.log) });
  await assert.rejects(join(host.tcp, { name: "Older", game: new DriftGame(), defs: databases(COMMAND_DEFS.slice(0, 3)) }),
    (e) => e instanceof RefusedError && e.reasonName === "Defs" && e.defStatuses[0] === 2, "a drift without Score: count differs");

  const arbB = await client(host.ws, "ArbB", { join: { arbiterSecret: SECRET } });
  const a = await client(host.tcp, "PlayA", { bot: 11 });
  const b = await client(host.ws, "PlayB", { bot: 12 });
  assert.equal(arbB.s.activeArbiter, false, "the second arbiter stands by");
  await until(() => a.checkpoints.size >= 3 && b.checkpoints.size >= 3, "three checkpoints on PlayA and PlayB", { detail: () => state(a, b) });

  // B corrupts map 1 away from a checkpoint: its next hash report finds it, the arbiter's upload repairs it.
  const corruptAt = b.game.world.tick;
  b.game.world.map(1).cells[0] ^= 0x5a5a;
  await until(() => b.desyncs.some((d) => d.state === 1 && d.playerId === b.s.playerId), "PlayB's corrupted map to be found and repaired", { detail: () => state(b, arb) + "\n" + logTail(host.log, /desync|resync|upload|PlayB/) });
  const found = b.desyncs.find((d) => d.state === 0 && d.playerId === b.s.playerId);
  assert.deepEqual(found.maps, [1], "the host names the corrupted map");
  // The arbiter's upload result and the others' Server_Desync travel on their own connections.
  await until(() => arb.uploads.some((u) => u.kind === 2 && u.accepted), "the arbiter's maps upload to be accepted", { ms: 10000, detail: () => JSON.stringify(arb.uploads.map((u) => [u.kind, u.accepted])) });
  await until(() => a.desyncs.some((d) => d.state === 1 && d.playerId === b.s.playerId), "PlayA to be told PlayB was repaired", { ms: 10000, detail: () => JSON.stringify(a.desyncs.map((d) => [d.state, d.playerId])) });
  await until(() => [...b.checkpoints.keys()].some((k) => k > found.tick + 120), "a checkpoint on PlayB 120 ticks past the repair", { detail: () => state(b) });

  // A joiner after the join point's age limit (10 s): the host asks the arbiter for a fresh one.
  await until(() => /msg="world uploaded"/.test(host.log()), "the host to log the world upload", { detail: () => logTail(host.log) });
  await sleep(10500);
  const c = await client(host.ws, "PlayC", { bot: 13 });
  await until(() => arb.uploads.some((u) => u.kind === 1 && u.accepted), "the arbiter's join point for PlayC", { detail: () => logTail(host.log, /upload|join point|PlayC/) });
  await until(() => c.checkpoints.size >= 2, "two checkpoints on PlayC", { detail: () => state(c) });

  // A game its tick listeners run, with only a hash function given: its hash reports are compared too.
  const own = new DriftGame();
  const es = await join(host.tcp, { name: "PlayE", hash: () => own.hash(), defs: databases() });
  open.push(es);
  own.load(es.state);
  const e = { name: "PlayE", checkpoints: new Map(), ticks: [], desyncs: [] };
  es.on("tick", (tick, cmds) => {
    for (const cmd of cmds) own.apply(cmd);
    own.step();
    e.ticks.push(tick);
    if ((tick + 1) % 60 === 0) e.checkpoints.set(tick + 1, own.hash().world);
  });
  es.on("desync", (d) => e.desyncs.push(d));
  await until(() => e.checkpoints.size >= 3, "three checkpoints on PlayE (its tick listeners run the game)", { detail: () => `PlayE at tick ${es.tick}, ${e.ticks.length} ticks` });
  // The host compared one of PlayE's reports with the arbiter's and accepted it.
  await until(async () => {
    const o = await (await fetch(`${host.web}/api/overview`)).json();
    return (o.players ?? []).some((p) => p.name === "PlayE" && p.accepted_tick > 0 && !p.unverified);
  }, "the host to accept one of PlayE's hash reports (/api/overview)");

  // A dropped player rejoins from the world it holds: the commands it missed, no world, no tick twice.
  a.s.dropConnection();
  await until(() => a.reconnects.length, "PlayA's rejoin after its drop", { detail: () => state(a) + "\n" + logTail(host.log, /PlayA|rejoin|held/) });
  assert.equal(a.reconnects[0].held, true, `rejoined from the held world (${a.reconnects[0].why})`);
  await until(() => /msg="rejoin from the held world" player=\d+ name=PlayA /.test(host.log()), "the host to log PlayA's held-world rejoin", { ms: 10000, detail: () => logTail(host.log, /PlayA/) });
  const after = a.s.tick;
  await until(() => [...a.checkpoints.keys()].some((k) => k > after + 60), "a checkpoint on PlayA 60 ticks past its rejoin", { detail: () => state(a) + "\n" + logTail(host.log, /PlayA/) });

  for (const o of [a, b, c, arbB]) assert.ok(sameHashes(arb, o, o === b ? new Set([found.tick]) : undefined) >= 2, `${o.name} compared`);
  for (const o of [arb, a, b, c, arbB, e]) consecutive(o);
  assert.ok(sameHashes(arb, e) >= 2, "PlayE compared");
  assert.ok(!e.desyncs.some((d) => d.playerId === es.playerId), "PlayE's reports agree with the arbiter's");
  assert.ok(!es.closed);
  assert.ok(found.tick > corruptAt, "found after the corruption");

  // The arbiter leaves; the standby takes over and uploads the next join point.
  await arb.s.leave();
  await until(() => /msg="arbiter left"/.test(host.log()), "the host to log the arbiter's leave", { detail: () => logTail(host.log, /arbiter|Arb/) });
  await sleep(10500);
  const d = await client(host.tcp, "PlayD");
  await until(() => arbB.uploads.some((u) => u.kind === 1 && u.accepted), "the standby arbiter's join point for PlayD", { detail: () => logTail(host.log, /upload|join point|arbiter|PlayD|ArbB/) });
  assert.equal(arbB.s.activeArbiter, true);
  await until(() => d.checkpoints.size >= 2, "two checkpoints on PlayD", { detail: () => state(d) });
  assert.ok(sameHashes(arbB, d) >= 1);
  assert.ok(sameHashes(arbB, a) >= 1);

  // On a loaded machine the host may hold time for a client that fell behind; it must not drop one.
  assert.doesNotMatch(host.log(), /msg="dropping a (lagging )?player/, "nobody dropped for lag");
  const holds = host.log().split("\n").filter((l) => /msg=lag holding=true/.test(l));
  if (holds.length) t.diagnostic(`the host held time ${holds.length} times: ${holds[0]}`);
  for (const o of [a, b, c, d, arbB]) await o.s.leave();
  await es.leave();
  for (const n of ["PlayA", "PlayB", "PlayC", "PlayD", "ArbB"]) await until(() => new RegExp(`msg="player left" player=\\d+ name=${n} `).test(host.log()), `the host to log ${n}'s leave`, { detail: () => logTail(host.log, new RegExp(n)) });
});

test("a relay host restarts from its save: the arbiter (TCP) and a player (WebSocket) rejoin with their tokens and play on", { timeout: 240000 }, async (t) => {
  const dir = tempDir(t);
  const secret = secretFile(dir, "secret", SECRET);
  const args = ["--relay", "--defs-from-arbiter", "--arbiter-secret-file", secret, "--save", pathJoin(dir, "relay.lhs")];
  const first = await startHost(t, [...args, "--new"]);
  t.after(() => open.forEach((s) => s.close()));
  const arb = await client(first.tcp, "Sav", { world: DriftWorld.create(21), join: { arbiterSecret: SECRET } });
  const p = await client(first.ws, "PlayS", { bot: 22 });
  await until(() => p.checkpoints.size >= 2, "two checkpoints on PlayS", { detail: () => state(p) });
  // Past the join point's age limit (10 s): the next joiner has the arbiter upload a newer point,
  // the one the save keeps with the commands since.
  await sleep(10500);
  const q = await client(first.tcp, "PlayT");
  await until(() => arb.uploads.some((u) => u.kind === 1 && u.accepted), "the arbiter's join point for PlayT", { detail: () => logTail(first.log, /upload|join point/) });
  await q.s.leave();
  await sleep(1000);

  // Stopped, the host tells everyone it is closing (ServerClosing) and saves; the clients keep rejoining.
  const stoppedAt = p.s.tick;
  assert.equal(await first.stop(), 0, logTail(first.log));
  assert.match(first.log(), /msg=saved /, "the host saved at its stop");
  assert.equal(p.s.closed, false, "a ServerClosing is not the end: the session rejoins");
  assert.equal(arb.s.closed, false);
  const second = await startHost(t, args, first);
  const rejoined = (c) => c.reconnects.length > 0;
  await until(() => rejoined(arb) && rejoined(p), "the arbiter and PlayS to rejoin the restarted host", { ms: 90000, detail: () => state(arb, p) + "\n" + logTail(second.log) });
  assert.equal(p.reconnects[0].held, false, "the restarted host sends the world");
  for (const n of ["PlayS", "Sav"]) {
    await until(() => new RegExp(`msg="player joined" .*name=${n} .*rejoin=true`).test(second.log()), `the restarted host to log ${n}'s rejoin, as itself with its token`, { detail: () => logTail(second.log) });
  }
  assert.match(second.log(), /msg="save loaded" /);
  assert.doesNotMatch(second.log(), /declared by the arbiter/, "the def databases came back with the save: no new declaration taken");
  await until(() => new RegExp(`msg="arbiter active" player=${arb.s.playerId}\\b`).test(second.log()), "the arbiter to be the active arbiter again", { detail: () => logTail(second.log) });
  // The world PlayS loaded is one the arbiter uploaded before the stop, with the hash it had then.
  const loaded = p.worlds.at(-1);
  assert.ok(loaded, "PlayS loaded the restored world");
  assert.ok(arb.uploads.some((u) => u.accepted && u.tick === loaded.tick && u.worldHash === loaded.hash),
    `the restored world (tick ${loaded.tick}, ${loaded.hash.toString(16)}) is one the arbiter uploaded: ${arb.uploads.map((u) => `${u.tick}:${u.worldHash.toString(16)}`).join(" ")}`);

  // Both play on in step from the restored world: checkpoints past the stop agree, and no tick came twice.
  const past = (c) => [...c.checkpoints.keys()].filter((k) => k > stoppedAt + 60).length;
  await until(() => past(p) >= 2 && past(arb) >= 2, "two checkpoints past the stop on the arbiter and PlayS", { detail: () => state(arb, p) });
  const compared = [...p.checkpoints.keys()].filter((k) => k > stoppedAt && arb.checkpoints.has(k));
  assert.ok(compared.length >= 2, `${compared.length} checkpoints past the stop compared`);
  sameHashes(arb, p);
  for (const c of [arb, p]) consecutive(c);
  assert.ok(!p.desyncs.some((d) => d.playerId === p.s.playerId), "PlayS agrees with the arbiter");
  t.diagnostic(`stopped at tick ${stoppedAt}; the restarted host sent the world of tick ${loaded.tick}; PlayS rejoined: ${p.reconnects[0].why}`);
  for (const c of [p, arb]) await c.s.leave();
});
