// The package's pieces against docs/protocol.md's own examples and vectors.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { test } from "node:test";
import { arbiterProof, decodeMsgpack, encodeMsgpack, readReplay, sha256, solvePuzzle, xxh64, buildPayload, readPayload, Session } from "../dist/index.js";
import { COMMAND_DEFS, databases, DriftGame, DriftWorld, KICK, POKE, SCORE, SPAWN } from "../examples/drift/drift.js";
import { repoRoot } from "./helpers.js";

const spec = readFileSync(join(repoRoot, "docs/protocol.md"), "utf8");
const hex = (s) => Uint8Array.from(s.trim().split(/\s+/).map((x) => parseInt(x, 16)));
const toHex = (b) => Buffer.from(b).toString("hex");
/** Every "Example NAME:" frame of section 4, and every step frame: [label, bytes]. */
function specFrames() {
  const re = /^(Example (?:Client|Server)_\w+|Relay step R\d+|Held step H\d+|Step \d+)[^\n]*\n\n```hex\n([^`]*)```/gm;
  return [...spec.matchAll(re)].map((m) => [m[1], hex(m[2])]);
}

test("XXH64 vectors", () => {
  assert.equal(xxh64(new Uint8Array(0)).toString(16), "ef46db3751d8e999");
  assert.equal(xxh64(new TextEncoder().encode("a")).toString(16), "d24ec4f1a98c6e5b");
  assert.equal(xxh64(new TextEncoder().encode("abc")).toString(16), "44bc2cf5ad770999");
  const long = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) & 0xff);
  assert.notEqual(xxh64(long), xxh64(long.subarray(1)));
});

/** XXH64 on BigInt, straight from the algorithm: the reference the package's 32-bit halves are held to. */
function xxh64Reference(b) {
  const M = (1n << 64n) - 1n, P1 = 11400714785074694791n, P2 = 14029467366897019727n, P3 = 1609587929392839161n, P4 = 9650029242287828579n, P5 = 2870177450012600261n;
  const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & M;
  const round = (acc, lane) => (rotl((acc + lane * P2) & M, 31n) * P1) & M;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = 0, h;
  if (b.length >= 32) {
    const v = [(P1 + P2) & M, P2, 0n, (M + 1n - P1) & M];
    for (; p + 32 <= b.length; p += 32) for (let i = 0; i < 4; i++) v[i] = round(v[i], dv.getBigUint64(p + 8 * i, true));
    h = (rotl(v[0], 1n) + rotl(v[1], 7n) + rotl(v[2], 12n) + rotl(v[3], 18n)) & M;
    for (const x of v) h = (((h ^ round(0n, x)) * P1) + P4) & M;
  } else h = P5;
  h = (h + BigInt(b.length)) & M;
  for (; p + 8 <= b.length; p += 8) h = (rotl(h ^ round(0n, dv.getBigUint64(p, true)), 27n) * P1 + P4) & M;
  if (p + 4 <= b.length) (h = (rotl(h ^ ((BigInt(dv.getUint32(p, true)) * P1) & M), 23n) * P2 + P3) & M), (p += 4);
  for (; p < b.length; p++) h = (rotl(h ^ ((BigInt(b[p]) * P5) & M), 11n) * P1) & M;
  h ^= h >> 33n;
  h = (h * P2) & M;
  h ^= h >> 29n;
  h = (h * P3) & M;
  return h ^ (h >> 32n);
}

test("XXH64 agrees with the BigInt reference at every length to 300 and on 1 MiB", () => {
  let seed = 12345;
  const bytes = (n) => Uint8Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16) & 0xff);
  for (let n = 0; n <= 300; n++) {
    const b = bytes(n);
    assert.equal(xxh64(b).toString(16), xxh64Reference(b).toString(16), `length ${n}`);
  }
  const big = bytes(1 << 20);
  assert.equal(xxh64(big), xxh64Reference(big));
  assert.equal(xxh64(big.subarray(3, 1000)), xxh64Reference(big.subarray(3, 1000)), "a view at an offset");
});

test("every example frame of the spec reads, and writes back as the same value", () => {
  const frames = specFrames();
  assert.ok(frames.length >= 40, `only ${frames.length} frames found`);
  for (const [label, b] of frames) {
    const len = new DataView(b.buffer).getUint32(0);
    assert.equal(len, b.length - 4, label);
    const v = decodeMsgpack(b.subarray(5));
    assert.deepEqual(decodeMsgpack(encodeMsgpack(v)), v, label);
  }
});

test("Client_Username of step R3 is written byte for byte, with the arbiter proof of section 14.2", () => {
  const proof = arbiterProof("correct horse battery", new Uint8Array(32).fill(0x33));
  assert.equal(toHex(proof), "cc7f52b04cb8b7c4e7df5a6f46c9f4391cf32ce56de390af5f1cda58b816427e");
  const r3 = specFrames().find(([l]) => l === "Relay step R3")[1];
  const body = encodeMsgpack({ a: proof, k: null, n: "arb", p: null, r: null, s: false });
  assert.equal(toHex(body), toHex(r3.subarray(5)));
});

test("the password puzzle's example solution (section 6.3)", () => {
  const ch = new Uint8Array(32);
  const msg = new Uint8Array([...new TextEncoder().encode("lockhost password puzzle v1"), 0, ...ch, 0, 0, 0, 0, 0, 1, 0x56, 0x52]);
  const h = sha256(msg); // nonce 87634 = 0x15652
  assert.equal(h[0], 0);
  assert.equal(h[1], 0);
  const n = solvePuzzle(ch, 16);
  assert.ok(n <= 87634n);
  assert.equal(toHex(sha256(new Uint8Array([]))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
});

test("the held-world replay of step H2 reads as H3 and H4's commands (section 6.6)", () => {
  const h2 = decodeMsgpack(specFrames().find(([l]) => l === "Held step H2")[1].subarray(5));
  const { speed, commands } = readReplay(new Uint8Array(gunzipSync(h2.c)));
  assert.equal(speed, 1);
  assert.deepEqual(commands.map((c) => [c.tick, c.seq, c.map, c.kind, c.player, toHex(c.payload)]), [
    [700, 1, 1, 3, 2, "0102"],
    [710, 0, 1, 3, 2, "03"],
  ]);
});

test("drift is deterministic and hashes as the Python drift does", () => {
  const w = DriftWorld.create(3, 3, 16);
  const pack = (...fields) => {
    const b = new Uint8Array(fields.reduce((n, [, size]) => n + size, 0));
    const dv = new DataView(b.buffer);
    let o = 0;
    for (const [set, size, v] of fields) (dv[set](o, v), (o += size));
    return b;
  };
  for (let i = 0; i < 600; i++) {
    w.step();
    if (i % 5 === 0) w.apply(i % 3, SPAWN, pack(["setUint16", 2, (i * 37) % 4096], ["setUint16", 2, (i * 91) % 4096], ["setInt16", 2, (i % 41) - 20], ["setInt16", 2, (i % 29) - 14]));
    if (i % 11 === 0) w.apply(i % 3, POKE, pack(["setUint8", 1, i % 16], ["setUint8", 1, Math.floor(i / 16) % 16], ["setInt32", 4, -i]));
    if (i % 97 === 0) (w.apply(i % 3, KICK, new Uint8Array(0)), w.apply(-1, SCORE, pack(["setInt32", 4, -i * 1000])));
  }
  assert.equal(w.tick, 600);
  assert.equal(w.hash().toString(16).padStart(16, "0"), "eef29455be75d9c5"); // clients/python/test_relay.py's GOLDEN_600
});

test("an upload's payload reads back with the same state, and a tampered blob is refused", async () => {
  const g = new DriftGame(DriftWorld.create(5));
  for (let i = 0; i < 100; i++) g.step();
  const state = g.save();
  const p = await buildPayload(state);
  const { header, state: back } = await readPayload(p);
  assert.equal(header.tick, 100);
  assert.equal(header.granted, 100);
  const g2 = new DriftGame();
  g2.load(back);
  assert.equal(g2.hash().world, g.hash().world);
  p[p.length - 3] ^= 1;
  await assert.rejects(readPayload(p), /XXH64 does not match/);
});

test("drift's def databases hash as section 7.1 says, as the Python drift declares them", () => {
  const [db] = databases();
  assert.deepEqual([db.type, db.count, db.hash.toString(16)], ["DriftCommandDef", 4, "63658b488147605f"]);
  const [older] = databases(COMMAND_DEFS.slice(0, 3));
  assert.deepEqual([older.count, older.hash.toString(16)], [3, "fabd92b2bda194f0"]);
});

test("a held rejoin (section 6.6, steps H2 to H6): the replay applies from the first command not applied, catches up to the grant without a hash report, and sends H6 byte for byte", async () => {
  // Ann's simulation stands at tick 700, the first of its commands (q 0) applied; the host's
  // H2 replays (700, 1) and (710, 0) up to its grant 720, a multiple of e (60).
  const applied = [];
  const game = {
    load() {},
    apply: (c) => applied.push(`${c.tick}:${c.seq}`),
    step() {},
    hash: () => ({ world: 0x6666666666666666n, maps: [] }),
  };
  const s = new Session("tcp://127.0.0.1:1", { name: "ann", game });
  const written = [];
  // The session's private state as it stands after its drop (the fields a real join would have set).
  Object.assign(s, { conn: { write: (b) => written.push(b), close() {} }, tick: 700, appliedAt: 1, ready: true, readyTick: 600, rejoining: true });
  const reconnects = [];
  s.on("reconnect", (r) => reconnects.push(r));
  // A game that sends a command from its tick listener, as games do: it waits for Client_WorldReady.
  let sent = null;
  s.on("tick", (tick) => {
    if (tick === 710) sent = s.send(3, new Uint8Array([1, 2]), 1);
  });
  const h2 = specFrames().find(([l]) => l === "Held step H2")[1];
  await s["handle"](h2[4], decodeMsgpack(h2.subarray(5)));
  assert.deepEqual(applied, ["700:1", "710:0"], "(700, 0) was applied before the drop; the replay's two commands once each");
  assert.equal(s.tick, 720);
  const h6 = specFrames().find(([l]) => l === "Held step H6")[1];
  const command = specFrames().find(([l]) => l === "Example Client_Command")[1];
  assert.ok(sent, "the tick listener ran while catching up");
  assert.deepEqual(written.map(toHex), [toHex(h6), toHex(command)],
    "Client_WorldReady as H6, then the listener's command: no Client_Hashes at 720, no Client_TickAck and no command while catching up");
  sent.catch(() => {});
  assert.deepEqual(reconnects, [{ held: true, why: "held" }]);
  s.close();
});
