// The world payload (docs/protocol.md, section 8): read and checked as
// section 8.3 says, and built for an arbiter's upload (section 14.4).

import { ProtocolError } from "./errors.js";
import { gunzip, gzip } from "./gzip.js";
import { arr, asMap, bin, decode, encode, num, u64, type Value } from "./msgpack.js";
import { xxh64 } from "./xxh64.js";

export const MAX_HEADER = 64 << 20;

/** A command as Server_Tick carries it (section 4, id 22). */
export interface Command {
  tick: number;
  seq: number;
  /** The map it acts on; -1 the world scope. */
  map: number;
  kind: number;
  /** Who sent it (0: the host). */
  player: number;
  payload: Uint8Array;
}

export function readCommand(v: Value): Command {
  const c = asMap(v);
  return { tick: num(c.t), seq: num(c.q), map: num(c.m), kind: num(c.k), player: num(c.p), payload: bin(c.d) };
}

/** A world as the game encodes it: the world blob and one blob a map, inflated. */
export interface WorldState {
  /** The tick of the state. */
  tick: number;
  /** The world-level state (blob 0), as the game encoded it. */
  world: Uint8Array | null;
  /** Each map's state, in the header's order. */
  maps: { id: number; data: Uint8Array; hash: bigint }[];
  /** The host's (or arbiter's) world hash at `tick`. */
  hash: bigint;
}

export interface Header {
  faction: number;
  tick: number;
  granted: number;
  worldHash: bigint;
  commands: Command[];
}

/** A payload's header, read and checked (8.1), and where its blobs start. */
function readHeader(p: Uint8Array): { h: Record<string, Value>; off: number } | null {
  if (p.length < 12) return null;
  const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const hdrLen = dv.getUint32(0);
  if (hdrLen > MAX_HEADER) throw new ProtocolError("a world header over 64 MiB");
  if (12 + hdrLen > p.length) return null;
  const hdrBytes = p.subarray(12, 12 + hdrLen);
  if (xxh64(hdrBytes) !== dv.getBigUint64(4)) throw new ProtocolError("the world header's hash does not match");
  return { h: asMap(decode(hdrBytes)), off: 12 + hdrLen };
}

interface BlobEntry {
  /** The blob's index: 0 the world, 1 + i the header's map i. */
  index: number;
  id: number;
  b: { s: number; r: number; h: bigint; z: number };
  x: bigint;
}

function blobEntries(h: Record<string, Value>): BlobEntry[] {
  const blob = (v: Value) => {
    const b = asMap(v);
    return { s: num(b.s), r: num(b.r), h: u64(b.h), z: num(b.z) };
  };
  const blobs: BlobEntry[] = [{ index: 0, id: -1, b: blob(h.w), x: 0n }];
  const maps = arr(h.m);
  if (maps.length > 4096) throw new ProtocolError("a header of more than 4096 maps");
  for (const mv of maps) {
    const m = asMap(mv);
    if (m.o !== undefined && m.o !== null) throw new ProtocolError("a thin map blob, and this client named no section");
    blobs.push({ index: blobs.length, id: num(m.i), b: blob(m.b), x: u64(m.x) });
  }
  return blobs;
}

/**
 * The blobs of a download cut short that arrived whole and match their XXH64 (section 8.4), with
 * those the header left out as held (`k`) and the client holds: what a rejoin names in
 * Client_Username's `r`, by their index in this header, and their bytes by hash.
 */
export function heldBlobs(p: Uint8Array, before?: Map<bigint, Uint8Array>): { list: { i: number; h: bigint }[]; blobs: Map<bigint, Uint8Array> } {
  const out = { list: [] as { i: number; h: bigint }[], blobs: new Map<bigint, Uint8Array>() };
  let hdr;
  try {
    hdr = readHeader(p);
  } catch {
    return out;
  }
  if (!hdr) return out;
  const held = new Set(arr(hdr.h.k).map((v) => num(v)));
  let off = hdr.off;
  for (const e of blobEntries(hdr.h)) {
    let bytes: Uint8Array | undefined;
    if (held.has(e.index)) bytes = before?.get(e.b.h);
    else if (off + e.b.s <= p.length) {
      bytes = p.slice(off, off + e.b.s);
      off += e.b.s;
      if (xxh64(bytes) !== e.b.h) bytes = undefined;
    } else break;
    if (!bytes) continue;
    out.list.push({ i: e.index, h: e.b.h });
    out.blobs.set(e.b.h, bytes);
  }
  return out;
}

/**
 * Reads a whole payload: checks the header hash, every blob's size and XXH64, and inflates each
 * within its declared size. `held`: the blobs a resume named, by hash, for those the header lists in `k`.
 */
export async function readPayload(p: Uint8Array, held?: Map<bigint, Uint8Array>): Promise<{ header: Header; state: WorldState }> {
  if (p.length < 12) throw new ProtocolError("a world payload under 12 bytes");
  const hdr = readHeader(p);
  if (!hdr) throw new ProtocolError("a world header past the payload's end");
  const { h } = hdr;
  const k = arr(h.k).map((v) => num(v));
  if (k.length && !held) throw new ProtocolError("the header lists held blobs, and this client resumed nothing");
  for (let i = 1; i < k.length; i++) if (k[i] <= k[i - 1]) throw new ProtocolError("the header's held blobs are not ascending");
  const blobs = blobEntries(h);
  const left = new Set(k);
  if (k.some((i) => i >= blobs.length)) throw new ProtocolError("the header lists a held blob it does not have");
  let off = hdr.off;
  if (blobs.reduce((n, x) => n + (left.has(x.index) ? 0 : x.b.s), 0) !== p.length - off) throw new ProtocolError("the blobs' sizes do not add up to the payload");
  const out: WorldState = { tick: num(h.t), world: null, maps: [], hash: u64(h.h) };
  for (const { index, id, b, x } of blobs) {
    let bytes: Uint8Array;
    if (left.has(index)) {
      const kept = held!.get(b.h);
      if (!kept) throw new ProtocolError(`the header lists blob ${index} as held, and this client holds no blob of its hash`);
      bytes = kept;
    } else {
      bytes = p.subarray(off, off + b.s);
      off += b.s;
    }
    if (xxh64(bytes) !== b.h) throw new ProtocolError(`blob ${id < 0 ? "world" : "map " + id}: its XXH64 does not match`);
    if (b.z !== 0) throw new ProtocolError(`blob codec ${b.z}, and this client listed gzip only`);
    const raw = await gunzip(bytes, b.r);
    if (raw.length !== b.r) throw new ProtocolError(`a blob inflates to ${raw.length} bytes, not ${b.r}`);
    if (id < 0) out.world = raw;
    else out.maps.push({ id, data: raw, hash: x });
  }
  const commands: Command[] = [];
  for (const ev of arr(h.c)) for (const cv of arr(asMap(ev).c)) commands.push(readCommand(cv));
  commands.sort((a, b) => a.tick - b.tick || a.seq - b.seq);
  const header: Header = { faction: num(h.f), tick: out.tick, granted: num(h.g), worldHash: out.hash, commands };
  if (header.granted < header.tick) throw new ProtocolError("a header whose grant is below its tick");
  return { header, state: out };
}

/** Builds the payload of an upload (section 14.4): f 0, g = t, no commands, nothing held; gzip blobs. */
export async function buildPayload(s: WorldState): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const blobInfo = async (raw: Uint8Array) => {
    const z = await gzip(raw);
    parts.push(z);
    return { h: u64(xxh64(z)), r: raw.length, s: z.length };
  };
  const w = await blobInfo(s.world ?? new Uint8Array(0));
  const maps: Value[] = [];
  for (const m of s.maps) maps.push({ b: await blobInfo(m.data), i: m.id, x: m.hash });
  const header = encode({ c: null, f: 0, g: s.tick, h: s.hash, k: null, m: maps, t: s.tick, w });
  const total = 12 + header.length + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, header.length);
  dv.setBigUint64(4, xxh64(header));
  out.set(header, 12);
  let o = 12 + header.length;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}
