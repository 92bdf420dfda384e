// Test helpers: the real host and join binaries, built from this repository
// into a temporary folder, and hosts started on loopback.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = resolve(pkgDir, "../..");

const hosts = new Set();

/** A fresh temporary folder, removed after the test once its hosts have stopped (a host saves on its way out). */
export function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "lockhost-js-"));
  t?.after(async () => {
    await Promise.all([...hosts].map((h) => h.stop()));
    rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });
  return d;
}

let bins;
/** Builds cmd/host and cmd/join once per test file (LOCKHOST_BIN_DIR: use the binaries there). */
export function binaries() {
  if (bins) return bins;
  let dir = process.env.LOCKHOST_BIN_DIR;
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), "lockhost-js-bin-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    execFileSync("go", ["build", "-o", dir, "./cmd/host", "./cmd/join"], { cwd: repoRoot, stdio: "inherit" });
  }
  bins = { host: join(dir, "host"), join: join(dir, "join") };
  return bins;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls cond every 50 ms until it holds, and resolves with its value. Every
 * wait is bounded: after `ms` (default 60 s; a single call of cond counts
 * against it too) it fails with "waited N s for <what>", and `detail()`'s
 * text when given (the host's log lines, a client's state), so a hang names
 * the step that hung instead of showing as the whole test's timeout.
 */
export async function until(cond, what, { ms = 60000, detail } = {}) {
  if (typeof what !== "string" || !what) throw new Error("until: say what is waited for");
  const start = Date.now();
  const timedOut = () => {
    let text = `waited ${((Date.now() - start) / 1000).toFixed(1)} s for ${what}`;
    if (detail) {
      try {
        text += "\n" + detail();
      } catch (e) {
        text += `\n(no detail: ${e.message})`;
      }
    }
    return new Error(text);
  };
  for (;;) {
    let timer;
    const left = start + ms - Date.now();
    const late = new Promise((_, reject) => (timer = setTimeout(() => reject(timedOut()), Math.max(0, left))));
    let v;
    try {
      v = await Promise.race([Promise.resolve().then(cond), late]);
    } finally {
      clearTimeout(timer);
    }
    if (v) return v;
    if (Date.now() - start >= ms) throw timedOut();
    await sleep(50);
  }
}

/** Resolves with p's value, or fails after ms saying what it waited for. */
export function within(p, what, ms = 60000) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`waited ${ms / 1000} s for ${what}`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The host log's lines that match re (all when none), the last n: a timed-out wait's detail. */
export function logTail(log, re, n = 30) {
  const lines = log().split("\n").filter((l) => !re || re.test(l));
  return lines.slice(-n).join("\n");
}

/** A child process whose output is kept; stop() ends it (SIGINT) and waits. */
export function run(cmd, args, opts = {}) {
  const p = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, LOCKHOST_PORT_MAPPING: "off", ...opts.env } });
  let out = "";
  p.stdout.on("data", (b) => (out += b));
  p.stderr.on("data", (b) => (out += b));
  const exited = new Promise((r) => p.on("exit", (code, sig) => r(code ?? sig)));
  return {
    proc: p,
    output: () => out,
    exited,
    async stop(sig = "SIGINT") {
      if (p.exitCode === null && p.signalCode === null) p.kill(sig);
      return exited;
    },
  };
}

/**
 * Starts host serve on loopback with --http; resolves with its TCP and WebSocket URLs. `at` starts
 * it again where an earlier one ran: the same ports and data folder (a restart).
 */
export async function startHost(t, args = [], at = null) {
  const { host } = binaries();
  const dir = at?.dir ?? tempDir(t);
  const h = run(host, ["serve", "--listen", at?.addr ?? "127.0.0.1:0", "--http", at ? at.web.replace("http://", "") : "127.0.0.1:0",
    "--discovery-port", "-1", "--data-dir", join(dir, "data"), ...args]);
  hosts.add(h);
  h.exited.then(() => hosts.delete(h));
  t?.after(() => h.stop());
  const [tcpAddr, web] = await until(() => {
    if (h.proc.exitCode !== null) throw new Error("the host exited:\n" + h.output());
    const a = /msg=hosting addr=(\S+)/.exec(h.output());
    const w = /msg="status page" url=http:\/\/([^/\s]+)/.exec(h.output());
    return a && w && [a[1], w[1]];
  }, "the host to print its TCP address and status page", { detail: h.output });
  return { ...h, dir, tcp: `tcp://${tcpAddr}`, ws: `ws://${web}/ws`, web: `http://${web}`, addr: tcpAddr, log: h.output };
}

/** A file holding one line. */
export function secretFile(dir, name, text) {
  const p = join(dir, name);
  writeFileSync(p, text + "\n", { mode: 0o600 });
  return p;
}

/** The small colony world the Python client check uses. */
export const smallWorld = ["--maps", "2", "--map-size", "60", "--things-per-map", "50", "--pawns-per-map", "3"];
