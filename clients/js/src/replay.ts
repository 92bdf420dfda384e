// Section 6.6: the replay layout of a held-world rejoin's missed commands.

import { ProtocolError } from "./errors.js";
import type { Command } from "./payload.js";

const MAX_REPLAY_COMMANDS = 131072;

/** Reads an inflated replay: the speed and the commands in (tick, seq) order. */
export function readReplay(b: Uint8Array): { speed: number; commands: Command[] } {
  let p = 0;
  const fail = (why: string): never => {
    throw new ProtocolError(`a wrong replay: ${why}`);
  };
  const uvarint = (): number => {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (p >= b.length) fail("short");
      const c = b[p++];
      v |= BigInt(c & 0x7f) << shift;
      if (!(c & 0x80)) {
        if (v > BigInt(Number.MAX_SAFE_INTEGER)) fail("a number too large");
        return Number(v);
      }
    }
    return fail("a varint over 10 bytes");
  };
  const varint = (): number => {
    const u = uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  };
  if (b.length < 1) fail("empty");
  const speed = b[p++];
  const n = uvarint();
  if (n > MAX_REPLAY_COMMANDS || n * 6 > b.length - p) fail(`${n} commands do not fit`);
  const cmds: Command[] = [];
  let tick = 0;
  for (let i = 0; i < n; i++) {
    tick += uvarint();
    cmds.push({ tick, seq: 0, map: 0, kind: 0, player: 0, payload: new Uint8Array(0) });
  }
  for (let i = 0; i < n; i++) {
    const expect = i === 0 || cmds[i].tick !== cmds[i - 1].tick ? 0 : cmds[i - 1].seq + 1;
    cmds[i].seq = expect + uvarint();
    if (cmds[i].seq > 0xffffffff) fail("a seq past uint32");
  }
  for (const c of cmds) c.map = varint();
  for (const c of cmds) {
    c.kind = uvarint();
    if (c.kind > 65535) fail("a kind past uint16");
  }
  for (const c of cmds) c.player = varint();
  const lengths: number[] = [];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const l = uvarint();
    if (l > 65536) fail("a payload over 64 KiB");
    sum += l;
    lengths.push(l);
  }
  if (sum !== b.length - p) fail("the payloads do not fill the rest");
  // Groups of one kind and one length, kinds then lengths ascending, each transposed.
  const groups = new Map<string, number[]>();
  cmds.forEach((c, i) => {
    const key = `${c.kind}/${lengths[i]}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
  });
  const order = [...groups.keys()].sort((x, y) => {
    const [ka, la] = x.split("/").map(Number);
    const [kb, lb] = y.split("/").map(Number);
    return ka - kb || la - lb;
  });
  for (const key of order) {
    const idx = groups.get(key)!;
    const len = lengths[idx[0]];
    const bufs = idx.map(() => new Uint8Array(len));
    for (let j = 0; j < len; j++) for (let k = 0; k < idx.length; k++) bufs[k][j] = b[p++];
    idx.forEach((ci, k) => (cmds[ci].payload = bufs[k]));
  }
  return { speed, commands: cmds };
}
