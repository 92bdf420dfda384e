// The msgpack subset the protocol uses (docs/protocol.md, section 1):
// nil, bool, integers of every width, str, bin, array and map. Floats,
// extensions and timestamps are errors, as the spec says.

export type Value = null | boolean | number | bigint | string | Uint8Array | Value[] | { [key: string]: Value };

const te = new TextEncoder();
const td = new TextDecoder("utf-8", { fatal: true });

/** Thrown when bytes do not read as the spec's msgpack. */
export class DecodeError extends Error {}

export class Writer {
  private buf = new Uint8Array(256);
  private n = 0;
  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.n++] = b;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  be(v: number | bigint, width: number): void {
    let x = BigInt.asUintN(width * 8, BigInt(v));
    this.room(width);
    for (let i = width - 1; i >= 0; i--) {
      this.buf[this.n + i] = Number(x & 0xffn);
      x >>= 8n;
    }
    this.n += width;
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.n);
  }

  /** Writes v. Integers: a value of 0 or more takes the shortest unsigned form, a negative one the shortest signed form. */
  value(v: Value | undefined): void {
    if (v === null || v === undefined) return this.byte(0xc0);
    if (v === true) return this.byte(0xc3);
    if (v === false) return this.byte(0xc2);
    if (typeof v === "number" || typeof v === "bigint") return this.int(v);
    if (typeof v === "string") {
      const b = te.encode(v);
      if (b.length < 32) this.byte(0xa0 | b.length);
      else if (b.length < 256) (this.byte(0xd9), this.byte(b.length));
      else if (b.length < 65536) (this.byte(0xda), this.be(b.length, 2));
      else (this.byte(0xdb), this.be(b.length, 4));
      return this.bytes(b);
    }
    if (v instanceof Uint8Array) {
      if (v.length < 256) (this.byte(0xc4), this.byte(v.length));
      else if (v.length < 65536) (this.byte(0xc5), this.be(v.length, 2));
      else (this.byte(0xc6), this.be(v.length, 4));
      return this.bytes(v);
    }
    if (Array.isArray(v)) {
      this.header(v.length, 0x90, 0xdc);
      for (const x of v) this.value(x);
      return;
    }
    // A map: keys in byte order, as the host writes them; undefined values are left out.
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    this.header(keys.length, 0x80, 0xde);
    for (const k of keys) {
      this.value(k);
      this.value(v[k]);
    }
  }
  private header(len: number, fix: number, code16: number): void {
    if (len < 16) this.byte(fix | len);
    else if (len < 65536) (this.byte(code16), this.be(len, 2));
    else (this.byte(code16 + 1), this.be(len, 4));
  }
  private int(v: number | bigint): void {
    if (typeof v === "number" && !Number.isInteger(v)) throw new TypeError(`not an integer: ${v}`);
    const b = BigInt(v);
    if (b >= 0n) {
      if (b < 128n) return this.byte(Number(b));
      if (b < 256n) return (this.byte(0xcc), this.byte(Number(b)));
      if (b < 65536n) return (this.byte(0xcd), this.be(b, 2));
      if (b < 1n << 32n) return (this.byte(0xce), this.be(b, 4));
      if (b < 1n << 64n) return (this.byte(0xcf), this.be(b, 8));
      throw new RangeError("integer over 64 bits");
    }
    if (b >= -32n) return this.byte(Number(b) & 0xff);
    if (b >= -128n) return (this.byte(0xd0), this.be(b, 1));
    if (b >= -32768n) return (this.byte(0xd1), this.be(b, 2));
    if (b >= -(1n << 31n)) return (this.byte(0xd2), this.be(b, 4));
    if (b >= -(1n << 63n)) return (this.byte(0xd3), this.be(b, 8));
    throw new RangeError("integer under 64 bits");
  }
}

export function encode(v: Value): Uint8Array {
  const w = new Writer();
  w.value(v);
  return w.result();
}

const MAX_DEPTH = 16;

/** Decodes one msgpack value that fills b exactly. Integers beyond 2^53 come as bigint, others as number. */
export function decode(b: Uint8Array): Value {
  const r = new Reader(b);
  const v = r.value(0);
  if (r.pos !== b.length) throw new DecodeError(`${b.length - r.pos} trailing bytes`);
  return v;
}

class Reader {
  pos = 0;
  private dv: DataView;
  constructor(private b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  private need(k: number): void {
    if (this.pos + k > this.b.length) throw new DecodeError("short body");
  }
  private u(width: number): number {
    this.need(width);
    const p = this.pos;
    this.pos += width;
    switch (width) {
      case 1: return this.dv.getUint8(p);
      case 2: return this.dv.getUint16(p);
      default: return this.dv.getUint32(p);
    }
  }
  private big(signed: boolean): number | bigint {
    this.need(8);
    const v = signed ? this.dv.getBigInt64(this.pos) : this.dv.getBigUint64(this.pos);
    this.pos += 8;
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
  }
  private raw(n: number): Uint8Array {
    this.need(n);
    const s = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  private str(n: number): string {
    try {
      return td.decode(this.raw(n));
    } catch {
      throw new DecodeError("a str that is not UTF-8");
    }
  }
  value(depth: number): Value {
    const c = this.u(1);
    if (c <= 0x7f) return c;
    if (c >= 0xe0) return c - 256;
    if ((c & 0xe0) === 0xa0) return this.str(c & 0x1f);
    if ((c & 0xf0) === 0x90) return this.array(c & 0x0f, depth);
    if ((c & 0xf0) === 0x80) return this.map(c & 0x0f, depth);
    switch (c) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return this.raw(this.u(1)).slice();
      case 0xc5: return this.raw(this.u(2)).slice();
      case 0xc6: return this.raw(this.u(4)).slice();
      case 0xcc: return this.u(1);
      case 0xcd: return this.u(2);
      case 0xce: return this.u(4);
      case 0xcf: return this.big(false);
      case 0xd0: { const v = this.u(1); return v > 127 ? v - 256 : v; }
      case 0xd1: { const v = this.u(2); return v > 32767 ? v - 65536 : v; }
      case 0xd2: { const v = this.u(4); return v | 0; }
      case 0xd3: return this.big(true);
      case 0xd9: return this.str(this.u(1));
      case 0xda: return this.str(this.u(2));
      case 0xdb: return this.str(this.u(4));
      case 0xdc: return this.array(this.u(2), depth);
      case 0xdd: return this.array(this.u(4), depth);
      case 0xde: return this.map(this.u(2), depth);
      case 0xdf: return this.map(this.u(4), depth);
    }
    throw new DecodeError(`msgpack type 0x${c.toString(16)} is not used by the protocol`);
  }
  private array(n: number, depth: number): Value[] {
    if (depth >= MAX_DEPTH) throw new DecodeError("nested too deep");
    const out: Value[] = [];
    for (let i = 0; i < n; i++) out.push(this.value(depth + 1));
    return out;
  }
  private map(n: number, depth: number): { [key: string]: Value } {
    if (depth >= MAX_DEPTH) throw new DecodeError("nested too deep");
    const out: { [key: string]: Value } = Object.create(null);
    for (let i = 0; i < n; i++) {
      const k = this.value(depth + 1);
      const v = this.value(depth + 1);
      if (typeof k === "string") out[k] = v;
      else if (k instanceof Uint8Array) out[td.decode(k)] = v;
      // other keys are unknown keys: skipped
    }
    return out;
  }
}

// Field readers: lenient as section 1 says (nil is the zero value, str for bin and bin for str, an integer for a bool).
type M = { [key: string]: Value };
export function asMap(v: Value | undefined): M {
  if (v === null || v === undefined) return Object.create(null);
  if (typeof v !== "object" || Array.isArray(v) || v instanceof Uint8Array) throw new DecodeError("a map was expected");
  return v as M;
}
export function num(v: Value | undefined, what = "integer"): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  throw new DecodeError(`${what}: an integer was expected`);
}
export function u64(v: Value | undefined, what = "integer"): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "number") return BigInt.asUintN(64, BigInt(v));
  if (typeof v === "bigint") return BigInt.asUintN(64, v);
  throw new DecodeError(`${what}: an integer was expected`);
}
export function bool(v: Value | undefined): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number" || typeof v === "bigint") return v != 0;
  throw new DecodeError("a bool was expected");
}
export function str(v: Value | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return td.decode(v);
  throw new DecodeError("a str was expected");
}
export function bin(v: Value | undefined): Uint8Array {
  if (v === null || v === undefined) return new Uint8Array(0);
  if (v instanceof Uint8Array) return v;
  if (typeof v === "string") return te.encode(v);
  throw new DecodeError("a bin was expected");
}
export function arr(v: Value | undefined): Value[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v;
  throw new DecodeError("an array was expected");
}
