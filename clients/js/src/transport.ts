// Byte streams to a host (docs/protocol.md, section 2): TCP and TLS in Node,
// WebSocket everywhere (the platform's WebSocket where there is one, else a
// small RFC 6455 client over node:net).

import { ConnectionError } from "./errors.js";

/** A connected byte stream. The session sets onData and onClose. */
export interface Conn {
  write(b: Uint8Array): void;
  close(): void;
  onData: (b: Uint8Array) => void;
  onClose: (err?: Error) => void;
}

export interface DialOptions {
  /** A host started with --tls: accept only a certificate with this SHA-256 fingerprint (hex, colons allowed). */
  fingerprint?: string;
  /** Gives up the connect after this many ms (default 10000). */
  connectTimeoutMs?: number;
}

const isNode = typeof process !== "undefined" && !!(process as any).versions?.node;

/** Opens url: tcp://HOST:PORT, tls://HOST:PORT, ws://HOST:PORT/ws or wss://…; a bare HOST:PORT is TCP. */
export async function dial(url: string, opts: DialOptions = {}): Promise<Conn> {
  if (!/^[a-z]+:\/\//i.test(url)) url = "tcp://" + url;
  const u = new URL(url);
  const scheme = u.protocol.replace(":", "").toLowerCase();
  if (scheme === "ws" || scheme === "wss") {
    const WS = (globalThis as any).WebSocket;
    if (WS && !isNode) return browserWS(WS, url);
    return nodeWS(u, opts);
  }
  if (scheme === "tcp" || scheme === "tls") {
    if (!isNode) throw new ConnectionError(`${scheme}:// needs Node; a browser joins over ws://`);
    return nodeStream(u.hostname.replace(/^\[|\]$/g, ""), Number(u.port || 30502), scheme === "tls" || !!opts.fingerprint, opts);
  }
  throw new ConnectionError(`unknown scheme ${scheme}:// (use tcp://, tls://, ws:// or wss://)`);
}

function browserWS(WS: any, url: string): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const ws = new WS(url, "lockhost");
    ws.binaryType = "arraybuffer";
    let open = false;
    const conn: Conn = {
      write: (b) => ws.readyState === 1 && ws.send(b),
      close: () => ws.close(1000),
      onData: () => {},
      onClose: () => {},
    };
    ws.onopen = () => ((open = true), resolve(conn));
    ws.onmessage = (ev: any) => {
      if (typeof ev.data === "string") return ws.close(1003);
      conn.onData(new Uint8Array(ev.data));
    };
    ws.onerror = () => {
      if (!open) reject(new ConnectionError(`WebSocket ${url} failed`));
    };
    ws.onclose = (ev: any) => {
      if (!open) return reject(new ConnectionError(`WebSocket ${url} closed (${ev.code})`));
      conn.onClose(ev.code === 1000 ? undefined : new ConnectionError(`WebSocket closed (${ev.code} ${ev.reason || ""})`.trim()));
    };
  });
}

async function rawSocket(host: string, port: number, tls: boolean, opts: DialOptions, alpn?: string[]): Promise<any> {
  const net: any = await import("node:net");
  const tlsMod: any = tls ? await import("node:tls") : null;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new ConnectionError(`connect to ${host}:${port} timed out`));
    }, opts.connectTimeoutMs ?? 10000);
    const done = () => {
      clearTimeout(timer);
      sock.removeListener("error", fail);
      if (tls && opts.fingerprint) {
        const want = opts.fingerprint.replace(/^sha256:/i, "").replace(/[^0-9a-f]/gi, "").toLowerCase();
        const got = String(sock.getPeerCertificate().fingerprint256 || "").replace(/:/g, "").toLowerCase();
        if (got !== want) {
          sock.destroy();
          return reject(new ConnectionError(`the host's certificate fingerprint is ${got}, not the one given`));
        }
      }
      sock.setNoDelay?.(true);
      resolve(sock);
    };
    const fail = (e: Error) => {
      clearTimeout(timer);
      reject(new ConnectionError(`connect to ${host}:${port}: ${e.message}`));
    };
    const sock = tls
      ? tlsMod.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: alpn, rejectUnauthorized: false, minVersion: "TLSv1.3" }, done)
      : net.connect({ host, port }, done);
    sock.on("error", fail);
  });
}

function wrapSocket(sock: any): Conn {
  const conn: Conn = {
    write: (b) => { if (!sock.destroyed) sock.write(b); },
    close: () => sock.end(),
    onData: () => {},
    onClose: () => {},
  };
  let closed = false;
  sock.on("data", (b: Uint8Array) => conn.onData(b));
  sock.on("error", (e: Error) => {
    if (!closed) ((closed = true), conn.onClose(new ConnectionError(e.message)));
  });
  sock.on("close", () => {
    if (!closed) ((closed = true), conn.onClose());
  });
  return conn;
}

async function nodeStream(host: string, port: number, tls: boolean, opts: DialOptions): Promise<Conn> {
  return wrapSocket(await rawSocket(host, port, tls, opts, ["lockhost/2"]));
}

/** RFC 6455 client: a GET upgrade, then masked binary frames out and unmasked frames in. */
async function nodeWS(u: URL, opts: DialOptions): Promise<Conn> {
  const crypto: any = await import("node:crypto");
  const tls = u.protocol === "wss:";
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const sock = await rawSocket(host, Number(u.port || (tls ? 443 : 80)), tls, opts, ["http/1.1"]);
  const key = crypto.randomBytes(16).toString("base64");
  const accept = crypto.createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  sock.write(
    `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: lockhost\r\n\r\n`,
  );
  const head = await new Promise<{ status: string; headers: string; rest: Buffer }>((resolve, reject) => {
    let acc = Buffer.alloc(0);
    const onData = (b: Buffer) => {
      acc = Buffer.concat([acc, b]);
      const end = acc.indexOf("\r\n\r\n");
      if (end < 0) return;
      sock.removeListener("data", onData);
      sock.removeListener("close", onClose);
      const text = acc.subarray(0, end).toString("latin1");
      const nl = text.indexOf("\r\n");
      resolve({ status: nl < 0 ? text : text.slice(0, nl), headers: text.slice(nl + 2), rest: acc.subarray(end + 4) });
    };
    const onClose = () => reject(new ConnectionError("the host closed the WebSocket upgrade"));
    sock.on("data", onData);
    sock.on("close", onClose);
  });
  if (!/^HTTP\/1\.1 101/.test(head.status)) {
    sock.destroy();
    throw new ConnectionError(`WebSocket upgrade refused: ${head.status}`);
  }
  const m = /^sec-websocket-accept:\s*(\S+)/im.exec(head.headers);
  if (!m || m[1] !== accept) {
    sock.destroy();
    throw new ConnectionError("WebSocket upgrade: wrong Sec-WebSocket-Accept");
  }
  let closed = false;
  const conn: Conn = {
    write: (b) => { if (!sock.destroyed && !closed) sock.write(wsFrame(2, b, crypto)); },
    close: () => {
      if (!sock.destroyed) sock.write(wsFrame(8, new Uint8Array([0x03, 0xe8]), crypto));
      sock.end();
    },
    onData: () => {},
    onClose: () => {},
  };
  let buf: Buffer = head.rest;
  const finish = (err?: Error) => {
    if (closed) return;
    closed = true;
    conn.onClose(err);
  };
  const parse = () => {
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 0x0f;
      if (buf[1] & 0x80) return finish(new ConnectionError("the host sent a masked WebSocket frame"));
      let len = buf[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (len > (1 << 20) + 1024) return finish(new ConnectionError("a WebSocket message over 1 MiB + 1 KiB"));
      if (buf.length < off + len) return;
      const payload = buf.subarray(off, off + len);
      buf = buf.subarray(off + len);
      if (op === 0 || op === 2) conn.onData(new Uint8Array(payload));
      else if (op === 1) {
        conn.close();
        return finish(new ConnectionError("the host sent a WebSocket text message"));
      } else if (op === 8) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        if (!sock.destroyed) sock.end(wsFrame(8, new Uint8Array(payload.subarray(0, 2)), crypto));
        return finish(code === 1000 || code === 1005 ? undefined : new ConnectionError(`WebSocket closed (${code} ${payload.subarray(2).toString()})`.trim()));
      } else if (op === 9) sock.write(wsFrame(10, new Uint8Array(payload), crypto));
    }
  };
  sock.on("data", (b: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, b]) : b;
    parse();
  });
  sock.on("error", (e: Error) => finish(new ConnectionError(e.message)));
  sock.on("close", () => finish());
  if (buf.length) queueMicrotask(parse);
  return conn;
}

function wsFrame(op: number, payload: Uint8Array, crypto: any): Uint8Array {
  const n = payload.length;
  const hl = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const out = new Uint8Array(hl + 4 + n);
  out[0] = 0x80 | op;
  if (n < 126) out[1] = 0x80 | n;
  else if (n < 65536) (out[1] = 0x80 | 126, new DataView(out.buffer).setUint16(2, n));
  else (out[1] = 0x80 | 127, new DataView(out.buffer).setBigUint64(2, BigInt(n)));
  const mask = crypto.randomBytes(4);
  out.set(mask, hl);
  for (let i = 0; i < n; i++) out[hl + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}
