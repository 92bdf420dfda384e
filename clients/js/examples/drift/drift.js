// Drift: a small deterministic lockstep game (the rules of the Python
// example, clients/python/drift.py), as a Game for @lockhost/client.
//
// The world holds a few maps, each a grid of uint32 counters crossed by
// particles; every tick each particle moves by its velocity (1/256 of a
// cell), bounces off the edges and adds one to the counter it lands on;
// every 32 ticks each counter loses an eighth. The world keeps a score and a
// 64-bit xorshift state. Integers only, so every machine agrees.
// Commands: SPAWN 1 (x, y uint16; vx, vy int16), POKE 2 (x, y uint8;
// amount int32), KICK 3 (empty), SCORE 4 on map -1 (amount int32).

import { defDatabase, defHash, xxh64 } from "../../dist/index.js";

export const SPAWN = 1, POKE = 2, KICK = 3, SCORE = 4;
export const FIX = 256, MAX_PARTICLES = 64, DECAY_EVERY = 32, WORLD_SCOPE = -1;
const M64 = (1n << 64n) - 1n;
const ascii = (s) => new TextEncoder().encode(s);

export class DriftMap {
  constructor(id, w, h) {
    if (!(w >= 1 && w <= 256 && h >= 1 && h <= 256)) throw new Error(`map ${id}: a side out of 1 to 256`);
    this.id = id; this.w = w; this.h = h;
    this.cells = new Uint32Array(w * h);
    this.particles = []; // [x, y, vx, vy]
  }
  step(tick) {
    const xmax = this.w * FIX - 1, ymax = this.h * FIX - 1;
    for (const p of this.particles) {
      let [x, y, vx, vy] = p;
      x += vx; y += vy;
      if (x < 0) { x = -x; vx = -vx; } else if (x > xmax) { x = 2 * xmax - x; vx = -vx; }
      if (y < 0) { y = -y; vy = -vy; } else if (y > ymax) { y = 2 * ymax - y; vy = -vy; }
      x = Math.min(Math.max(x, 0), xmax);
      y = Math.min(Math.max(y, 0), ymax);
      p[0] = x; p[1] = y; p[2] = vx; p[3] = vy;
      const i = Math.floor(y / FIX) * this.w + Math.floor(x / FIX);
      this.cells[i] = (this.cells[i] + 1) >>> 0;
    }
    if (tick % DECAY_EVERY === 0) for (let i = 0; i < this.cells.length; i++) this.cells[i] -= this.cells[i] >>> 3;
  }
  encode() {
    const n = this.cells.length;
    const out = new Uint8Array(12 + 4 * n + 2 + 16 * this.particles.length);
    const dv = new DataView(out.buffer);
    out.set(ascii("DRM1"));
    dv.setInt32(4, this.id); dv.setUint16(8, this.w); dv.setUint16(10, this.h);
    for (let i = 0; i < n; i++) dv.setUint32(12 + 4 * i, this.cells[i]);
    let o = 12 + 4 * n;
    dv.setUint16(o, this.particles.length); o += 2;
    for (const p of this.particles) for (const v of p) (dv.setInt32(o, v), (o += 4));
    return out;
  }
  static decode(b) {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (b.length < 14 || new TextDecoder().decode(b.subarray(0, 4)) !== "DRM1") throw new Error("not a drift map");
    const m = new DriftMap(dv.getInt32(4), dv.getUint16(8), dv.getUint16(10));
    const n = m.w * m.h;
    if (b.length < 12 + 4 * n + 2) throw new Error(`map ${m.id}: too short`);
    for (let i = 0; i < n; i++) m.cells[i] = dv.getUint32(12 + 4 * i);
    let o = 12 + 4 * n;
    const count = dv.getUint16(o); o += 2;
    if (count > MAX_PARTICLES || b.length !== o + 16 * count) throw new Error(`map ${m.id}: particles do not fit`);
    for (let i = 0; i < count; i++, o += 16) m.particles.push([dv.getInt32(o), dv.getInt32(o + 4), dv.getInt32(o + 8), dv.getInt32(o + 12)]);
    return m;
  }
  hash() { return xxh64(this.encode()); }
}

export class DriftWorld {
  constructor(tick = 0, rng = 0x9E3779B97F4A7C15n, score = 0n) {
    this.tick = tick; this.rng = rng || 1n; this.score = score; this.maps = [];
  }
  static create(seed, maps = 3, side = 16) {
    const w = new DriftWorld(0, (BigInt(seed) * 0x9E3779B97F4A7C15n + 1n) & M64);
    const span = BigInt(side * FIX);
    for (let i = 0; i < maps; i++) {
      const m = new DriftMap(i, side, side);
      for (let k = 0; k < 4; k++) {
        const r = w.next();
        m.particles.push([Number(r % span), Number((r >> 16n) % span), Number((r >> 32n) % 97n) - 48, Number((r >> 40n) % 97n) - 48]);
      }
      w.maps.push(m);
    }
    return w;
  }
  next() {
    let x = this.rng;
    x ^= (x << 13n) & M64; x ^= x >> 7n; x ^= (x << 17n) & M64;
    this.rng = x;
    return x;
  }
  map(id) { return this.maps.find((m) => m.id === id) ?? null; }
  step() {
    this.tick++;
    this.next();
    for (const m of this.maps) {
      m.step(this.tick);
      this.score = BigInt.asIntN(64, this.score + BigInt(m.particles.length));
    }
  }
  apply(mapId, kind, payload) {
    const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    if (kind === SCORE && mapId === WORLD_SCOPE && payload.length === 4) {
      this.score = BigInt.asIntN(64, this.score + BigInt(dv.getInt32(0)));
      return true;
    }
    const m = mapId !== WORLD_SCOPE ? this.map(mapId) : null;
    if (!m) return false;
    if (kind === SPAWN && payload.length === 8 && m.particles.length < MAX_PARTICLES) {
      m.particles.push([dv.getUint16(0) % (m.w * FIX), dv.getUint16(2) % (m.h * FIX), dv.getInt16(4), dv.getInt16(6)]);
      return true;
    }
    if (kind === POKE && payload.length === 6) {
      const x = payload[0], y = payload[1];
      if (x < m.w && y < m.h) {
        const i = y * m.w + x;
        m.cells[i] = (m.cells[i] + dv.getInt32(2)) >>> 0;
        return true;
      }
      return false;
    }
    if (kind === KICK && payload.length === 0) {
      for (const p of m.particles) [p[2], p[3]] = [-p[3], p[2]];
      return true;
    }
    return false;
  }
  encodeWorld() {
    const out = new Uint8Array(32 + 4 * this.maps.length);
    const dv = new DataView(out.buffer);
    out.set(ascii("DRW1"));
    dv.setBigUint64(4, BigInt(this.tick)); dv.setBigUint64(12, this.rng); dv.setBigInt64(20, this.score);
    dv.setUint32(28, this.maps.length);
    this.maps.forEach((m, i) => dv.setInt32(32 + 4 * i, m.id));
    return out;
  }
  static decodeWorld(b) {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (b.length < 32 || new TextDecoder().decode(b.subarray(0, 4)) !== "DRW1") throw new Error("not a drift world");
    const n = dv.getUint32(28);
    if (b.length !== 32 + 4 * n) throw new Error("a world that does not fit its bytes");
    const w = new DriftWorld(Number(dv.getBigUint64(4)), dv.getBigUint64(12), dv.getBigInt64(20));
    const ids = [];
    for (let i = 0; i < n; i++) ids.push(dv.getInt32(32 + 4 * i));
    return { world: w, ids };
  }
  mapHashes() { return this.maps.map((m) => ({ id: m.id, hash: m.hash() })); }
  hash() {
    const we = this.encodeWorld();
    const hs = this.mapHashes();
    const b = new Uint8Array(we.length + 8 * hs.length);
    b.set(we);
    const dv = new DataView(b.buffer);
    hs.forEach((h, i) => dv.setBigUint64(we.length + 8 * i, h.hash));
    return xxh64(b);
  }
}

/** The Game @lockhost/client drives: load, apply, step, hash, and save for the arbiter. */
export class DriftGame {
  constructor(world = null) { this.world = world; }
  load(state, repair) {
    const { world, ids } = DriftWorld.decodeWorld(state.world);
    const loaded = new Map(state.maps.map((m) => [m.id, DriftMap.decode(m.data)]));
    if (!repair || repair.full) {
      world.maps = ids.map((id) => {
        const m = loaded.get(id);
        if (!m) throw new Error(`map ${id} is missing from the world`);
        return m;
      });
    } else {
      world.maps = ids.map((id) => loaded.get(id) ?? this.world.map(id));
    }
    world.tick = state.tick;
    this.world = world;
    for (const m of state.maps) {
      if (this.world.map(m.id).hash() !== m.hash) throw new Error(`map ${m.id} does not hash to the header's`);
    }
  }
  apply(cmd) { this.world.apply(cmd.map, cmd.kind, cmd.payload); }
  step() { this.world.step(); }
  hash() { return { world: this.world.hash(), maps: this.world.mapHashes() }; }
  save(maps) {
    const w = this.world;
    const chosen = maps ? maps.map((id) => w.map(id)) : w.maps;
    return { tick: w.tick, world: w.encodeWorld(), maps: chosen.map((m) => ({ id: m.id, data: m.encode(), hash: m.hash() })), hash: w.hash() };
  }
}

/** A random command for a bot: [mapId, kind, payload], from rnd() in [0, 1). */
export function randomCommand(rnd, world) {
  const pick = (n) => Math.floor(rnd() * n);
  const kind = [SPAWN, SPAWN, POKE, POKE, KICK, SCORE][pick(6)];
  if (kind === SCORE) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, pick(2000) - 1000);
    return [WORLD_SCOPE, SCORE, b];
  }
  const m = world.maps[pick(world.maps.length)];
  if (kind === SPAWN) {
    const b = new Uint8Array(8), dv = new DataView(b.buffer);
    dv.setUint16(0, pick(m.w * FIX)); dv.setUint16(2, pick(m.h * FIX));
    dv.setInt16(4, pick(193) - 96); dv.setInt16(6, pick(193) - 96);
    return [m.id, SPAWN, b];
  }
  if (kind === POKE) {
    const b = new Uint8Array(6), dv = new DataView(b.buffer);
    b[0] = pick(m.w); b[1] = pick(m.h); dv.setInt32(2, 1 + pick(499));
    return [m.id, POKE, b];
  }
  return [m.id, KICK, new Uint8Array(0)];
}

/** Drift's def databases (section 7.1): DriftCommandDef, a def a command, hashed as the element it would be. */
export const COMMAND_DEFS = [["Spawn", SPAWN, "x y uint16, vx vy int16"], ["Poke", POKE, "x y uint8, amount int32"], ["Kick", KICK, ""], ["Score", SCORE, "amount int32"]];
export function databases(commands = COMMAND_DEFS) {
  const type = "DriftCommandDef";
  const defs = commands.map(([name, kind, payload]) => [name, defHash(type, name, {
    name: type,
    children: [{ name: "defName", text: name }, { name: "kind", text: String(kind) }, { name: "payload", text: payload }],
  })]);
  return [defDatabase(type, defs)];
}
