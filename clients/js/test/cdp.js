// A small Chrome DevTools Protocol client for the browser test: headless
// Chromium from the system, one WebSocket to the browser (RFC 6455 text
// frames over node:net), pages as flattened target sessions.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { until, within } from "./helpers.js";

export function chromiumPath() {
  for (const p of [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (p && existsSync(p)) return p;
  return null;
}

export async function launch(profileDir) {
  const proc = spawn(chromiumPath(), [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows", `--user-data-dir=${profileDir}`, "--remote-debugging-port=0", "--window-size=900,700", "about:blank",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (b) => (err += b));
  const portFile = join(profileDir, "DevToolsActivePort");
  const [port, path] = await until(() => {
    if (proc.exitCode !== null) throw new Error("chromium exited:\n" + err);
    if (!existsSync(portFile)) return null;
    const lines = readFileSync(portFile, "utf8").split("\n");
    return lines.length >= 2 && lines[1] ? lines : null;
  }, "Chromium to write its DevTools port", { detail: () => err });
  const ws = await within(wsConnect("127.0.0.1", Number(port), path.trim()), "Chromium's DevTools WebSocket to open", 30000);
  const browser = new Browser(ws, proc);
  return browser;
}

class Browser {
  constructor(ws, proc) {
    this.ws = ws;
    this.proc = proc;
    this.id = 0;
    this.calls = new Map();
    ws.onMessage = (text) => {
      const m = JSON.parse(text);
      if (m.id && this.calls.has(m.id)) {
        const { resolve, reject } = this.calls.get(m.id);
        this.calls.delete(m.id);
        m.error ? reject(new Error(m.error.message)) : resolve(m.result);
      }
    };
  }
  send(method, params = {}, sessionId) {
    const id = ++this.id;
    // Every call is bounded: a page that stops answering names the call it did not answer.
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(new Error(`waited 30 s for Chromium to answer ${method}`));
      }, 30000);
      const settle = (fn) => (v) => (clearTimeout(timer), fn(v));
      this.calls.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.ws.send(JSON.stringify({ id, method, params, sessionId }));
    });
  }
  async newPage(url) {
    const { targetId } = await this.send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await this.send("Target.attachToTarget", { targetId, flatten: true });
    const page = {
      eval: async (expr) => {
        const r = await this.send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true }, sessionId);
        if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
        return r.result.value;
      },
      screenshot: async () => Buffer.from((await this.send("Page.captureScreenshot", { format: "png" }, sessionId)).data, "base64"),
    };
    await this.send("Page.enable", {}, sessionId);
    await this.send("Page.navigate", { url }, sessionId);
    return page;
  }
  async close() {
    try {
      await Promise.race([this.send("Browser.close"), new Promise((r) => setTimeout(r, 2000))]);
    } catch {}
    this.ws.close();
    if (this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGKILL");
      await exited;
    }
  }
}

function wsConnect(host, port, path) {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port }, () => {
      const key = randomBytes(16).toString("base64");
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let buf = Buffer.alloc(0);
    let open = false;
    let parts = [];
    const ws = {
      onMessage: () => {},
      send(text) {
        const payload = Buffer.from(text);
        const n = payload.length;
        const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : n < 65536 ? Buffer.from([0x81, 0xfe, n >> 8, n & 255]) : Buffer.concat([Buffer.from([0x81, 0xff]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
        const mask = randomBytes(4);
        const body = Buffer.alloc(n);
        for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
        sock.write(Buffer.concat([head, mask, body]));
      },
      close: () => sock.destroy(),
    };
    sock.on("error", reject);
    sock.on("data", (b) => {
      buf = Buffer.concat([buf, b]);
      if (!open) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!/^HTTP\/1\.1 101/.test(buf.toString("latin1", 0, end))) return reject(new Error("DevTools upgrade refused"));
        buf = buf.subarray(end + 4);
        open = true;
        resolve(ws);
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1] & 0x7f, off = 2;
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
        else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
        if (buf.length < off + len) return;
        const fin = buf[0] & 0x80, op = buf[0] & 0x0f;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (op === 1 || op === 0) {
          parts.push(payload);
          if (fin) {
            const text = Buffer.concat(parts).toString("utf8");
            parts = [];
            ws.onMessage(text);
          }
        }
      }
    });
  });
}
