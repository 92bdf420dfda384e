// gzip (codec 0 of section 8.1), the only codec this client lists: it
// sends Client_Protocol without `z`, so the host sends it gzip alone.
// Node's zlib where there is one, else the platform's (De)CompressionStream.

import { ProtocolError } from "./errors.js";

let zlib: any;
async function nodeZlib(): Promise<any> {
  if (zlib !== undefined) return zlib;
  try {
    zlib = typeof process !== "undefined" && (process as any).versions?.node ? await import("node:zlib") : null;
  } catch {
    zlib = null;
  }
  return zlib;
}

async function streamThrough(b: Uint8Array, ts: any, limit: number): Promise<Uint8Array> {
  const reader: any = new Blob([b as any]).stream().pipeThrough(ts).getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value: Uint8Array };
    if (done) break;
    n += value.length;
    if (n > limit) {
      await reader.cancel();
      throw new ProtocolError(`a blob inflates past its declared size ${limit}`);
    }
    parts.push(value);
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}

/** Inflates one gzip member, refusing more than `limit` bytes out. */
export async function gunzip(b: Uint8Array, limit: number): Promise<Uint8Array> {
  const z = await nodeZlib();
  if (z) {
    try {
      const out: Uint8Array = z.gunzipSync(b, { maxOutputLength: Math.max(1, limit + 1) });
      if (out.length > limit) throw new ProtocolError(`a blob inflates past its declared size ${limit}`);
      return new Uint8Array(out.buffer, out.byteOffset, out.length);
    } catch (e) {
      if (e instanceof ProtocolError) throw e;
      throw new ProtocolError(`a blob does not inflate: ${(e as Error).message}`);
    }
  }
  try {
    return await streamThrough(b, new (globalThis as any).DecompressionStream("gzip"), limit);
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(`a blob does not inflate: ${(e as Error).message}`);
  }
}

/** One gzip member of b. */
export async function gzip(b: Uint8Array): Promise<Uint8Array> {
  const z = await nodeZlib();
  if (z) {
    const out: Uint8Array = z.gzipSync(b);
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  }
  return streamThrough(b, new (globalThis as any).CompressionStream("gzip"), Infinity);
}
