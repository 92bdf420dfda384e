// XXH64 with seed 0 (docs/protocol.md, section 1: every hash on the wire),
// from the public algorithm, on BigInt.

const M = (1n << 64n) - 1n;
const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, lane: bigint): bigint => (rotl((acc + lane * P2) & M, 31n) * P1) & M;
const merge = (acc: bigint, v: bigint): bigint => (((acc ^ round(0n, v)) * P1) + P4) & M;

export function xxh64(b: Uint8Array, seed = 0n): bigint {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = b.length;
  let p = 0;
  let h: bigint;
  if (n >= 32) {
    let v1 = (seed + P1 + P2) & M, v2 = (seed + P2) & M, v3 = seed & M, v4 = (seed - P1) & M;
    const limit = n - 32;
    while (p <= limit) {
      v1 = round(v1, dv.getBigUint64(p, true));
      v2 = round(v2, dv.getBigUint64(p + 8, true));
      v3 = round(v3, dv.getBigUint64(p + 16, true));
      v4 = round(v4, dv.getBigUint64(p + 24, true));
      p += 32;
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = (seed + P5) & M;
  }
  h = (h + BigInt(n)) & M;
  while (p + 8 <= n) {
    h ^= round(0n, dv.getBigUint64(p, true));
    h = (rotl(h, 27n) * P1 + P4) & M;
    p += 8;
  }
  if (p + 4 <= n) {
    h ^= (BigInt(dv.getUint32(p, true)) * P1) & M;
    h = (rotl(h, 23n) * P2 + P3) & M;
    p += 4;
  }
  while (p < n) {
    h ^= (BigInt(b[p]) * P5) & M;
    h = (rotl(h, 11n) * P1) & M;
    p++;
  }
  h ^= h >> 33n;
  h = (h * P2) & M;
  h ^= h >> 29n;
  h = (h * P3) & M;
  h ^= h >> 32n;
  return h;
}
