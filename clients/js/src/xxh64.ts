// XXH64 with seed 0 (docs/protocol.md, section 1: every hash on the wire),
// from the public algorithm. The 64-bit lanes are kept as two uint32
// halves in plain numbers, multiplied from 16-bit halves and Math.imul
// (about three times as fast as BigInt arithmetic in Node), and the
// result is returned as a bigint.

// The primes, as [high, low] halves.
const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

// The result of each operation below: its high and low halves.
let rh = 0, rl = 0;

/** The high 32 bits of the 64-bit product of two uint32, from 16-bit halves (every partial sum exact). */
function mulHi(a: number, b: number): number {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const m1 = a1 * b0, m2 = a0 * b1;
  const t = ((a0 * b0) >>> 16) + (m1 & 0xffff) + (m2 & 0xffff);
  return (a1 * b1 + (m1 >>> 16) + (m2 >>> 16) + (t >>> 16)) >>> 0;
}

/** (ah:al) * (bh:bl) mod 2^64. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  rh = (mulHi(al, bl) + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
  rl = Math.imul(al, bl) >>> 0;
}

/** (ah:al) + (bh:bl) mod 2^64. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const l = al + bl;
  rl = l >>> 0;
  rh = (ah + bh + (l > 0xffffffff ? 1 : 0)) >>> 0;
}

/** (h:l) rotated left by r, 0 < r < 64. */
function rotl(h: number, l: number, r: number): void {
  if (r >= 32) {
    const t = h;
    (h = l), (l = t), (r -= 32);
  }
  if (r === 0) return void ((rh = h), (rl = l));
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** round(acc, lane) = rotl(acc + lane * P2, 31) * P1. */
function round(acch: number, accl: number, lh: number, ll: number): void {
  // lane * P2
  const ph = (mulHi(ll, P2L) + Math.imul(lh, P2L) + Math.imul(ll, P2H)) >>> 0;
  const pl = Math.imul(ll, P2L) >>> 0;
  // + acc
  const sl = accl + pl;
  const l = sl >>> 0;
  const h = (acch + ph + (sl > 0xffffffff ? 1 : 0)) >>> 0;
  // rotl 31
  const xh = ((h << 31) | (l >>> 1)) >>> 0;
  const xl = ((l << 31) | (h >>> 1)) >>> 0;
  // * P1
  rh = (mulHi(xl, P1L) + Math.imul(xh, P1L) + Math.imul(xl, P1H)) >>> 0;
  rl = Math.imul(xl, P1L) >>> 0;
}

export function xxh64(b: Uint8Array): bigint {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = b.length;
  let p = 0;
  let hh: number, hl: number;
  if (n >= 32) {
    // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (seed 0).
    add(P1H, P1L, P2H, P2L);
    let v1h = rh, v1l = rl, v2h = P2H, v2l = P2L, v3h = 0, v3l = 0;
    add(~P1H >>> 0, ~P1L >>> 0, 0, 1);
    let v4h = rh, v4l = rl;
    const limit = n - 32;
    while (p <= limit) {
      round(v1h, v1l, dv.getUint32(p + 4, true), dv.getUint32(p, true));
      v1h = rh, v1l = rl;
      round(v2h, v2l, dv.getUint32(p + 12, true), dv.getUint32(p + 8, true));
      v2h = rh, v2l = rl;
      round(v3h, v3l, dv.getUint32(p + 20, true), dv.getUint32(p + 16, true));
      v3h = rh, v3l = rl;
      round(v4h, v4l, dv.getUint32(p + 28, true), dv.getUint32(p + 24, true));
      v4h = rh, v4l = rl;
      p += 32;
    }
    rotl(v1h, v1l, 1);
    hh = rh, hl = rl;
    rotl(v2h, v2l, 7);
    add(hh, hl, rh, rl);
    hh = rh, hl = rl;
    rotl(v3h, v3l, 12);
    add(hh, hl, rh, rl);
    hh = rh, hl = rl;
    rotl(v4h, v4l, 18);
    add(hh, hl, rh, rl);
    hh = rh, hl = rl;
    for (const [vh, vl] of [[v1h, v1l], [v2h, v2l], [v3h, v3l], [v4h, v4l]]) {
      // merge: h = (h ^ round(0, v)) * P1 + P4
      round(0, 0, vh, vl);
      mul((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, P1H, P1L);
      add(rh, rl, P4H, P4L);
      hh = rh, hl = rl;
    }
  } else {
    hh = P5H, hl = P5L;
  }
  add(hh, hl, Math.floor(n / 4294967296), n >>> 0);
  hh = rh, hl = rl;
  while (p + 8 <= n) {
    round(0, 0, dv.getUint32(p + 4, true), dv.getUint32(p, true));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hh = rh, hl = rl;
    p += 8;
  }
  if (p + 4 <= n) {
    mul(0, dv.getUint32(p, true), P1H, P1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hh = rh, hl = rl;
    p += 4;
  }
  while (p < n) {
    mul(0, b[p], P5H, P5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11);
    mul(rh, rl, P1H, P1L);
    hh = rh, hl = rl;
    p++;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  hh = rh, hl = rl;
  const sh = hh >>> 29, sl = ((hh << 3) | (hl >>> 29)) >>> 0;
  hh = (hh ^ sh) >>> 0, hl = (hl ^ sl) >>> 0;
  mul(hh, hl, P3H, P3L);
  hh = rh, hl = (rl ^ rh) >>> 0;
  return (BigInt(hh) << 32n) | BigInt(hl);
}
