// The drift game in the browser, on a relay host (host serve --relay --http):
// the first page to arrive uploads a new world as the arbiter; the others
// join it and play. Everything between them is @lockhost/client.
import { join, RefusedError, hex } from "../../dist/index.js";
import { databases, DriftGame, DriftWorld, FIX, KICK, SPAWN, randomCommand } from "./drift.js";

const $ = (id) => document.getElementById(id);
const q = new URLSearchParams(location.search);
const defaultHost = `ws://${location.hostname || "127.0.0.1"}:8080/ws`;
$("host").value = q.get("host") ?? defaultHost;
$("name").value = q.get("name") ?? "P" + Math.floor(Math.random() * 1e4);
$("secret").value = q.get("secret") ?? "";

const log = (line) => {
  $("log").textContent = `${line}\n` + $("log").textContent;
};

/** What the page shows of itself, for people and for the browser test. */
const drift = (window.drift = { ready: false, role: "", checkpoints: {}, desyncs: [], error: "", session: null, game: null });

async function start() {
  const url = $("host").value, name = $("name").value, secret = $("secret").value;
  const game = new DriftGame();
  let s;
  try {
    s = await join(url, { name, game, defs: databases() });
    drift.role = "player";
  } catch (e) {
    // A new relay session has no world until its arbiter uploads one: be it.
    if (!(e instanceof RefusedError && e.reasonName === "Generic" && secret)) throw e;
    game.world = DriftWorld.create(Number(q.get("seed") ?? Date.now() % 100000));
    s = await join(url, { name, game, arbiterSecret: secret, defs: databases() });
    drift.role = "arbiter";
  }
  drift.session = s;
  drift.game = game;
  drift.ready = true;
  $("role").textContent = `${name}: ${drift.role}`;
  log(`joined as ${drift.role} at tick ${s.tick}`);

  s.on("tick", (t) => {
    if ((t + 1) % 60 === 0) drift.checkpoints[t + 1] = hex(game.hash().world);
  });
  s.on("chat", (c) => log(`<${c.name}> ${c.text}`));
  s.on("notice", (n) => log(n.text));
  s.on("players", (ps) => ($("players").textContent = ps.map((p) => p.name).join(", ")));
  s.on("desync", (d) => {
    drift.desyncs.push({ state: d.state, player: d.name, tick: d.tick, maps: d.maps, mine: d.playerId === s.playerId });
    log(`desync ${["detected", "repaired", "dropped"][d.state] ?? d.state}: ${d.name} at tick ${d.tick}, maps ${d.maps.join(",")}`);
  });
  s.on("upload", (u) => log(`upload ${u.request} (kind ${u.kind}) at tick ${u.tick}: ${u.accepted ? "accepted" : "refused " + u.message}`));
  s.on("close", (e) => {
    drift.error = e ? e.message : "closed";
    log(`session closed${e ? ": " + e.message : ""}`);
  });
  $("players").textContent = s.players.map((p) => p.name).join(", ");

  let lastMap = 0;
  const canvases = new Map();
  for (const m of game.world.maps) {
    const c = document.createElement("canvas");
    c.width = m.w * 16;
    c.height = m.h * 16;
    c.title = `map ${m.id}`;
    c.addEventListener("click", (ev) => {
      const r = c.getBoundingClientRect();
      const x = Math.floor(((ev.clientX - r.left) / r.width) * m.w * FIX), y = Math.floor(((ev.clientY - r.top) / r.height) * m.h * FIX);
      const b = new Uint8Array(8), dv = new DataView(b.buffer);
      dv.setUint16(0, x); dv.setUint16(2, y); dv.setInt16(4, 40); dv.setInt16(6, -30);
      lastMap = m.id;
      s.send(SPAWN, b, m.id).then((at) => log(`spawn on map ${m.id} stamped for tick ${at}`), (e) => log(e.message));
    });
    $("maps").append(c);
    canvases.set(m.id, c);
  }
  addEventListener("keydown", (ev) => {
    if (ev.key === "k" || ev.key === "K") s.send(KICK, new Uint8Array(0), lastMap);
  });

  const draw = () => {
    for (const m of game.world.maps) {
      const ctx = canvases.get(m.id).getContext("2d");
      for (let y = 0; y < m.h; y++)
        for (let x = 0; x < m.w; x++) {
          const v = Math.min(255, m.cells[y * m.w + x] * 4);
          ctx.fillStyle = `rgb(${v >> 2},${v >> 1},${v})`;
          ctx.fillRect(x * 16, y * 16, 16, 16);
        }
      ctx.fillStyle = "#fc4";
      for (const [px, py] of m.particles) ctx.fillRect((px / FIX) * 16 - 3, (py / FIX) * 16 - 3, 6, 6);
    }
    $("tick").textContent = `tick ${game.world.tick}`;
    $("hash").textContent = `world ${hex(game.hash().world)}`;
    if (!s.closed) requestAnimationFrame(draw);
  };
  requestAnimationFrame(draw);

  // ?bot=N: send a random command every N ms (demos and the browser test).
  const every = Number(q.get("bot") ?? 0);
  if (every > 0) {
    let seed = [...name].reduce((n, ch) => n * 31 + ch.charCodeAt(0), 7) % 2147483648;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const timer = setInterval(() => {
      if (s.closed) return clearInterval(timer);
      const [m, k, p] = randomCommand(rnd, game.world);
      s.send(k, p, m).catch(() => {});
    }, every);
  }
}

/** Corrupts map 1 on purpose, to see the host find it and the arbiter's upload repair it. */
drift.corrupt = () => {
  drift.game.world.map(1).cells[0] ^= 0x5a5a;
  return drift.game.world.tick;
};

$("form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  start().catch((e) => {
    drift.error = e.message;
    log(`error: ${e.message}`);
  });
});
if (q.get("host")) start().catch((e) => ((drift.error = e.message), log(`error: ${e.message}`)));
