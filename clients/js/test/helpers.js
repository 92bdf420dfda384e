// Test helpers: the real host and join binaries, built from this repository
// into a temporary folder, and hosts started on loopback.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = resolve(pkgDir, "../..");

/** A fresh temporary folder, removed by cleanup(). */
export function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "lockhost-js-"));
  t?.after(() => rmSync(d, { recursive: true, force: true }));
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

/** Polls cond every 50 ms until it holds. The test's own timeout bounds it. */
export async function until(cond, what = "a condition") {
  for (;;) {
    const v = await cond();
    if (v) return v;
    await sleep(50);
  }
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

/** Starts host serve on loopback with --http; resolves with its TCP and WebSocket URLs. */
export async function startHost(t, args = []) {
  const { host } = binaries();
  const dir = tempDir(t);
  const h = run(host, ["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--discovery-port", "-1", "--data-dir", join(dir, "data"), ...args]);
  t?.after(() => h.stop());
  const [tcpAddr, web] = await until(() => {
    if (h.proc.exitCode !== null) throw new Error("the host exited:\n" + h.output());
    const a = /msg=hosting addr=(\S+)/.exec(h.output());
    const w = /msg="status page" url=http:\/\/([^/\s]+)/.exec(h.output());
    return a && w && [a[1], w[1]];
  });
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
