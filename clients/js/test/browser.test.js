// The browser example (examples/drift) in two headless-Chromium pages against
// a relay host: the first page becomes the arbiter and uploads its world, the
// second joins and plays; every hash checkpoint both pages took agrees; one
// page's map is corrupted on purpose and the host repairs it from the
// arbiter's upload. Needs Chromium (Debian's chromium); skipped without it.
import assert from "node:assert/strict";
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { test } from "node:test";
import { chromiumPath, launch } from "./cdp.js";
import { logTail, pkgDir, secretFile, startHost, tempDir, until } from "./helpers.js";

const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };

/** Any static file server serves the example; this one serves the package folder. */
function serveStatic(root) {
  const srv = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    let file = join(root, path);
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!file.startsWith(root) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv)));
}

test("the drift example in two headless-Chromium pages: arbiter and player in step, a corrupted map repaired", { timeout: 240000, skip: chromiumPath() ? false : "no Chromium" }, async (t) => {
  const dir = tempDir(t);
  const secret = secretFile(dir, "secret", "correct horse battery");
  const host = await startHost(t, ["--relay", "--defs-from-arbiter", "--arbiter-secret-file", secret, "--http-origin", "127.0.0.1:*"]);
  const srv = await serveStatic(pkgDir);
  const profile = mkdtempSync(join(tmpdir(), "lockhost-js-chromium-"));
  const browser = await launch(profile);
  t.after(async () => {
    await browser.close();
    srv.closeAllConnections();
    srv.close();
    // Chromium's helpers may still write the profile after close: a
    // folder left in the temp dir is not the test's failure.
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
    } catch (e) {
      console.log(`# the Chromium profile ${profile} was not removed: ${e.message}`);
    }
  });
  const base = `http://127.0.0.1:${srv.address().port}/examples/drift/?host=${encodeURIComponent(host.ws)}&secret=${encodeURIComponent("correct horse battery")}&bot=150`;

  const first = await browser.newPage(`${base}&name=Ann&seed=7`);
  await until(() => first.eval("window.drift?.ready || window.drift?.error").then((v) => v), "the first page to upload its world or fail", { ms: 90000, detail: () => logTail(host.log) });
  assert.equal(await first.eval("window.drift.error"), "");
  assert.equal(await first.eval("window.drift.role"), "arbiter", "the first page is the arbiter");
  const second = await browser.newPage(`${base}&name=Bob`);
  await until(() => second.eval("window.drift?.ready || window.drift?.error").then((v) => v), "the second page to join or fail", { ms: 90000, detail: () => logTail(host.log) });
  assert.equal(await second.eval("window.drift.error"), "");
  assert.equal(await second.eval("window.drift.role"), "player", "the second page joins the arbiter's world");

  const checkpoints = (p) => p.eval("JSON.stringify(window.drift.checkpoints)").then(JSON.parse);
  await until(async () => Object.keys(await checkpoints(second)).length >= 4, "four checkpoints on the second page");
  const corruptedAt = await second.eval("window.drift.corrupt()");
  await until(() => second.eval("window.drift.desyncs.some((d) => d.mine && d.state === 1)"), "the corrupted page to be repaired", { detail: () => logTail(host.log, /desync|resync|upload|Bob/) });
  const desyncs = await second.eval("JSON.stringify(window.drift.desyncs)").then(JSON.parse);
  const found = desyncs.find((d) => d.mine && d.state === 0);
  assert.deepEqual(found.maps, [1]);
  assert.ok(found.tick > corruptedAt);
  await until(async () => Object.keys(await checkpoints(second)).some((k) => Number(k) > found.tick + 180), "a checkpoint 180 ticks past the repair");

  const a = await checkpoints(first), b = await checkpoints(second);
  let n = 0;
  for (const [tick, h] of Object.entries(b)) {
    if (!(tick in a) || Number(tick) === found.tick) continue;
    assert.equal(h, a[tick], `the pages differ at tick ${tick}`);
    n++;
  }
  assert.ok(n >= 5, `${n} checkpoints compared`);
  assert.match(host.log(), /msg="desync repaired" player=\d+ name=Bob /);
  assert.equal(await second.eval("window.drift.error"), "");
  if (process.env.LOCKHOST_SCREENSHOT) writeFileSync(process.env.LOCKHOST_SCREENSHOT, await second.screenshot());
});
