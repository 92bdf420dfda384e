// Section 7.1: how a def and a def database are hashed, for a game that
// declares its own databases (section 14.9, a relay host's --defs-from-arbiter).

import { xxh64 } from "./xxh64.js";
import type { DefDatabase } from "./session.js";

/** A resolved def element: name, attributes, text (trimmed, LF line ends) and children in document order. */
export interface DefElement {
  name: string;
  attrs?: Record<string, string>;
  text?: string;
  children?: DefElement[];
}

const te = new TextEncoder();

class Bytes {
  parts: number[] = [];
  uvarint(n: number): void {
    while (n >= 0x80) {
      this.parts.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    this.parts.push(n);
  }
  str(s: string): void {
    const b = te.encode(s);
    this.uvarint(b.length);
    for (const x of b) this.parts.push(x);
  }
  u64le(x: bigint): void {
    for (let i = 0n; i < 8n; i++) this.parts.push(Number((x >> (8n * i)) & 0xffn));
  }
  node(n: DefElement): void {
    this.str(n.name);
    const attrs = Object.entries(n.attrs ?? {}).sort(([ka, va], [kb, vb]) => cmpBytes(ka, kb) || cmpBytes(va, vb));
    this.uvarint(attrs.length);
    for (const [k, v] of attrs) (this.str(k), this.str(v.replace(/[\t\r\n]/g, " ")));
    this.str(n.text ?? "");
    this.uvarint(n.children?.length ?? 0);
    for (const c of n.children ?? []) this.node(c);
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

function cmpBytes(a: string, b: string): number {
  const x = te.encode(a), y = te.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** Def.Hash = XXH64(str(type) str(defName) node(element)). */
export function defHash(type: string, defName: string, element: DefElement): bigint {
  const b = new Bytes();
  b.str(type);
  b.str(defName);
  b.node(element);
  return xxh64(b.bytes());
}

/** A database of defs [defName, Def.Hash] as Client_Defs declares it: Database.Hash over the defs sorted by name. */
export function defDatabase(type: string, defs: [string, bigint][]): DefDatabase {
  const sorted = [...defs].sort(([a], [b]) => cmpBytes(a, b));
  const b = new Bytes();
  b.str(type);
  b.uvarint(sorted.length);
  for (const [name, h] of sorted) (b.str(name), b.u64le(h));
  return { type, count: sorted.length, hash: xxh64(b.bytes()) };
}
