// Relay mode (docs/protocol.md, section 14) against the real host binary,
// the scenarios of scripts/python-relay-check with the drift game of
// examples/drift, over TCP and WebSocket: the arbiter uploads the world,
// players play in step, a joiner mid-game gets a join point from the
// arbiter, a corrupted map is repaired from the arbiter's upload, the
// arbiter leaves and a standby takes over; a wrong secret and a player before the world are refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join, RefusedError } from "../dist/index.js";
import { COMMAND_DEFS, databases, DriftGame, DriftWorld, randomCommand } from "../examples/drift/drift.js";
import { secretFile, sleep, startHost, tempDir, until } from "./helpers.js";

const SECRET = "correct horse battery";

const open = [];
/** A drift client: its game, its checkpoints (tick -> world hash) and a bot. */
async function client(url, name, opts = {}) {
  const game = new DriftGame(opts.world ?? null);
  const s = await join(url, { name, game, defs: databases(), ...opts.join });
  open.push(s);
  const c = { s, game, name, checkpoints: new Map(), ticks: [], uploads: [], desyncs: [], reconnects: [] };
  s.on("tick", (t) => {
    c.ticks.push(t);
    if ((t + 1) % 60 === 0) c.checkpoints.set(t + 1, game.hash().world);
  });
  s.on("upload", (u) => c.uploads.push(u));
  s.on("desync", (d) => c.desyncs.push(d));
  s.on("reconnect", (r) => c.reconnects.push(r));
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

function consecutive(c) {
  for (let i = 1; i < c.ticks.length; i++) assert.equal(c.ticks[i], c.ticks[i - 1] + 1, `${c.name}: tick ${c.ticks[i]} after ${c.ticks[i - 1]}`);
}

test("relay mode with the drift game over TCP and WebSocket", { timeout: 300000 }, async (t) => {
  const dir = tempDir(t);
  const secret = secretFile(dir, "secret", SECRET);
  const host = await startHost(t, ["--relay", "--defs-from-arbiter", "--arbiter-secret-file", secret]);
  t.after(() => open.forEach((s) => s.close()));

  console.log("step 1", new Date().toISOString());
  await assert.rejects(join(host.tcp, { name: "Early", game: new DriftGame() }), (e) => e instanceof RefusedError && e.reasonName === "Generic" && /no world yet/.test(e.hostMessage));
  console.log("step 2", new Date().toISOString());
  await assert.rejects(join(host.ws, { name: "Wrong", arbiterSecret: "wrong horse battery", game: new DriftGame(DriftWorld.create(1)) }),
    (e) => e instanceof RefusedError && e.reasonName === "BadArbiterSecret");

  console.log("step 3", new Date().toISOString());
  const arb = await client(host.tcp, "Arb", { world: DriftWorld.create(7), join: { arbiterSecret: SECRET } });
  assert.match(host.log(), /msg="world uploaded" tick=0 maps=3 /, "join resolved once the world upload was taken");
  assert.equal(arb.s.activeArbiter, true);

  console.log("step 4", new Date().toISOString());
  assert.match(host.log(), /msg="def databases declared by the arbiter" .*name=Arb databases=1 /);
  await assert.rejects(join(host.tcp, { name: "Older", game: new DriftGame(), defs: databases(COMMAND_DEFS.slice(0, 3)) }),
    (e) => e instanceof RefusedError && e.reasonName === "Defs" && e.defStatuses[0] === 2, "a drift without Score: count differs");

  const arbB = await client(host.ws, "ArbB", { join: { arbiterSecret: SECRET } });
  console.log("step 5", new Date().toISOString());
  const a = await client(host.tcp, "PlayA", { bot: 11 });
  console.log("step 6", new Date().toISOString());
  const b = await client(host.ws, "PlayB", { bot: 12 });
  assert.equal(arbB.s.activeArbiter, false, "the second arbiter stands by");
  console.log("step 7", new Date().toISOString());
  await until(() => a.checkpoints.size >= 3 && b.checkpoints.size >= 3);

  // B corrupts map 1 away from a checkpoint: its next hash report finds it, the arbiter's upload repairs it.
  const corruptAt = b.game.world.tick;
  b.game.world.map(1).cells[0] ^= 0x5a5a;
  console.log("step 8", new Date().toISOString());
  await until(() => b.desyncs.some((d) => d.state === 1 && d.playerId === b.s.playerId));
  const found = b.desyncs.find((d) => d.state === 0 && d.playerId === b.s.playerId);
  assert.deepEqual(found.maps, [1], "the host names the corrupted map");
  assert.ok(arb.uploads.some((u) => u.kind === 2 && u.accepted), "the arbiter uploaded the maps");
  assert.ok(a.desyncs.some((d) => d.state === 1 && d.playerId === b.s.playerId), "everyone is told");
  console.log("step 9", new Date().toISOString());
  await until(() => [...b.checkpoints.keys()].some((k) => k > found.tick + 120));

  // A joiner after the join point's age limit (10 s): the host asks the arbiter for a fresh one.
  console.log("step 10", new Date().toISOString());
  await until(() => /msg="world uploaded"/.test(host.log()));
  console.log("step 11", new Date().toISOString());
  await sleep(10500);
  console.log("step 12", new Date().toISOString());
  const c = await client(host.ws, "PlayC", { bot: 13 });
  console.log("step 13", new Date().toISOString());
  await until(() => arb.uploads.some((u) => u.kind === 1 && u.accepted));
  console.log("step 14", new Date().toISOString());
  await until(() => c.checkpoints.size >= 2);

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
  await until(() => e.checkpoints.size >= 3);
  // The host compared one of PlayE's reports with the arbiter's and accepted it.
  await until(async () => {
    const o = await (await fetch(`${host.web}/api/overview`)).json();
    return (o.players ?? []).some((p) => p.name === "PlayE" && p.accepted_tick > 0 && !p.unverified);
  });

  console.log("step 17", new Date().toISOString());
  for (const o of [a, b, c, arbB]) assert.ok(sameHashes(arb, o, o === b ? new Set([found.tick]) : undefined) >= 2, `${o.name} compared`);
  console.log("step 18", new Date().toISOString());
  for (const o of [arb, a, b, c, arbB, e]) consecutive(o);
  assert.ok(sameHashes(arb, e) >= 2, "PlayE compared");
  assert.ok(!e.desyncs.some((d) => d.playerId === es.playerId), "PlayE's reports agree with the arbiter's");
  assert.ok(!es.closed);
  assert.ok(found.tick > corruptAt, "found after the corruption");

  // The arbiter leaves; the standby takes over and uploads the next join point.
  await arb.s.leave();
  console.log("step 19", new Date().toISOString());
  await until(() => /msg="arbiter left"/.test(host.log()));
  console.log("step 20", new Date().toISOString());
  await sleep(10500);
  console.log("step 21", new Date().toISOString());
  const d = await client(host.tcp, "PlayD");
  console.log("step 22", new Date().toISOString());
  await until(() => arbB.uploads.some((u) => u.kind === 1 && u.accepted));
  assert.equal(arbB.s.activeArbiter, true);
  console.log("step 23", new Date().toISOString());
  await until(() => d.checkpoints.size >= 2);
  assert.ok(sameHashes(arbB, d) >= 1);
  assert.ok(sameHashes(arbB, a) >= 1);

  assert.doesNotMatch(host.log(), /msg=lag holding=true/, "nobody held the session");
  console.log("step 24", new Date().toISOString());
  for (const o of [a, b, c, d, arbB]) await o.s.leave();
  await es.leave();
  for (const n of ["PlayA", "PlayB", "PlayC", "PlayD", "ArbB"]) await until(() => new RegExp(`msg="player left" player=\\d+ name=${n} `).test(host.log()));
});
