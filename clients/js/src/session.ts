// A session from the client's side (docs/protocol.md, sections 6, 9, 10,
// 14): the handshake, the download, lockstep play, hash reports, repairs,
// the arbiter's uploads, held-world rejoin and leaving.

import { ConnectionError, CommandRefusedError, LockhostError, ProtocolError, RefusedError, TimeoutError } from "./errors.js";
import { gunzip } from "./gzip.js";
import { arr, asMap, bin, bool, decode, encode, num, str, u64, type Value } from "./msgpack.js";
import { buildPayload, heldBlobs, readCommand, readPayload, type Command, type WorldState } from "./payload.js";
import { readReplay } from "./replay.js";
import { arbiterProof, passwordProof, solvePuzzle } from "./sha256.js";
import { dial, type Conn } from "./transport.js";

export const PROTOCOL_VERSION = 4;
const MAX_FRAME = 1 << 20;
/** ServerClosing (section 5.1): the one Server_Disconnect after which the session rejoins. */
const REJOIN_AFTER = 10;
const CHUNK = 256 * 1024;

// Packet IDs (section 4).
const C = { Protocol: 0, Defs: 1, Username: 2, WorldReady: 3, Command: 4, Clock: 5, Ack: 6, TickAck: 7, Keepalive: 8, Hashes: 9, Resynced: 10, Leave: 11, Chat: 12, Upload: 13, ExplainReply: 15 };
const S = { ModList: 16, DefsOK: 17, WorldData: 18, PlayerList: 19, Disconnect: 20, Notice: 21, Tick: 22, Clock: 23, Keepalive: 24, Session: 25, Resync: 26, Desync: 27, Chat: 28, UploadRequest: 29, UploadResult: 30, ExplainRequest: 32 };

export interface Player {
  id: number;
  name: string;
  /** 0 for a spectator. */
  faction: number;
  /** Section 5.4: 1 downloading, 2 playing, 3 spectating, 4 desynced. */
  status: number;
  spectator: boolean;
  latencyMs: number;
}

export interface Hashes {
  world: bigint;
  maps: { id: number; hash: bigint; parts?: bigint[] }[];
}

/**
 * A game the session drives itself. Give one to have hash reports, repairs
 * and (with an arbiter secret) the arbiter's uploads; without one, the
 * session only emits "tick" and the listeners simulate.
 */
export interface Game {
  /** Loads a world: the join's download, or a repair (`repair` names what it replaces: every map when `full`). */
  load(state: WorldState, repair?: { full: boolean; maps: number[] }): void;
  /** Applies one command at the current tick. */
  apply(cmd: Command): void;
  /** Steps from the current tick to the next. */
  step(): void;
  /** The state hashes at the current tick (section 10). */
  hash(): Hashes;
  /** The arbiter: the state now, its maps all or only those named, with their hashes. */
  save?(maps?: number[]): WorldState;
}

export interface DefDatabase {
  type: string;
  count: number;
  hash: bigint;
}

export interface JoinOptions {
  /** 3 to 15 letters, digits or `_`. */
  name: string;
  /** The session password, when the host asks for one (section 6.3). */
  password?: string;
  /** Join as a spectator. */
  spectate?: boolean;
  /** Be the arbiter of a relay host (section 14): the secret. Needs a game with save(). */
  arbiterSecret?: string | Uint8Array;
  /** tls:// : the host certificate's SHA-256 fingerprint. */
  fingerprint?: string;
  game?: Game;
  /** A hash function for a game the listeners run (hash reports at every multiple of the host's interval). */
  hash?: () => Hashes;
  /** The def databases to declare; default: the host's own list, echoed (section 11). */
  defs?: DefDatabase[];
  /**
   * After a drop, or the host's ServerClosing (a host restarting from its save knows the token),
   * rejoin with the token for this many ms (default 120000; 0: never); then "close".
   */
  reconnectForMs?: number;
  /** The largest world payload taken (default 2 GiB). */
  maxWorldBytes?: number;
}

export interface ChatLine {
  name: string;
  playerId: number;
  text: string;
}
export interface Notice {
  kind: number;
  text: string;
}
export interface Desync {
  state: number;
  playerId: number;
  name: string;
  tick: number;
  maps: number[];
  world: boolean;
  repairMs: number;
}
export interface UploadInfo {
  request: number;
  kind: number;
  tick: number;
  applied: number;
  bytes: number;
  worldHash: bigint;
}

type Events = {
  tick: (tick: number, commands: Command[]) => void;
  chat: (line: ChatLine) => void;
  players: (players: Player[]) => void;
  notice: (n: Notice) => void;
  desync: (d: Desync) => void;
  /** A world was loaded after the join's: a repair, or a rejoin that was sent the world. */
  world: (state: WorldState) => void;
  /** The arbiter: an upload the host took (or refused). */
  upload: (u: UploadInfo & { accepted: boolean; message: string }) => void;
  reconnect: (how: { held: boolean; why: string }) => void;
  close: (err?: LockhostError) => void;
};

function frame(id: number, body: Value): Uint8Array {
  const b = encode(body);
  const out = new Uint8Array(5 + b.length);
  new DataView(out.buffer).setUint32(0, b.length + 1);
  out[4] = id;
  out.set(b, 5);
  return out;
}

function nowMicros(): bigint {
  const p = (globalThis as any).performance;
  const ms = p && p.timeOrigin ? p.timeOrigin + p.now() : Date.now();
  return BigInt(Math.round(ms * 1000));
}

interface PendingSend {
  map: number;
  kind: number;
  payload: Uint8Array;
  /** Written to the host; a command waits while the session (re)joins. */
  sent: boolean;
  resolve: (t: number) => void;
  reject: (e: Error) => void;
}

/** Joins url and resolves at WorldReady (for the arbiter of a new relay session: once its world is accepted). */
export async function join(url: string, opts: JoinOptions): Promise<Session> {
  const s = new Session(url, opts);
  try {
    await s._connect(false);
  } catch (e) {
    // Admitted and dropped during the download: rejoin with the token and resume it (8.4).
    const err = await s._rejoinAfterFirst(e as Error);
    if (err) throw err;
  }
  return s;
}

export class Session {
  /** The world as loaded at the join (or the last reload): the bytes, at `state.tick`. */
  world: Uint8Array | null = null;
  /** The whole loaded state: the world blob and every map. */
  state!: WorldState;
  /** The tick the session's simulation stands at. */
  tick = 0;
  /** The latest grant (section 9.2). */
  granted = 0;
  /** The host's speed: 0 paused, 1, 2, 3. */
  speed = 1;
  players: Player[] = [];
  playerId = 0;
  faction = 0;
  /** Ticks between hash reports (0: none). */
  hashEvery = 0;
  gameName = "";
  /** The arbiter of a relay session: whether the host made it active. */
  activeArbiter = false;
  /** The password puzzle's difficulty (section 6.3) this connection's handshake solved: 0 when the host set none. */
  puzzleBits = 0;
  closed = false;

  private conn: Conn | null = null;
  private inbuf = new Uint8Array(0);
  private chain: Promise<void> = Promise.resolve();
  private listeners = new Map<string, Set<Function>>();
  private token: Uint8Array | null = null;
  private pending = new Map<number, Command[]>();
  private appliedAt = 0; // commands of `tick` applied (game mode): the `q` of the next one to apply
  private ready = false;
  private readyTick = 0;
  private lastAck = -1;
  private reports: { t: number; w: bigint }[] = [];
  private sends: PendingSend[] = [];
  private chats: { text: string; sent: boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  private hold: { tick: number; applied: number; why: "repair" | "upload" } | null = null;
  private repair: { full: boolean; maps: number[]; buf: Uint8Array | null; got: number; total: number; payload: Uint8Array | null } | null = null;
  private uploads: { q: number; kind: number; tick: number; applied: number; maps: number[]; limit: number }[] = [];
  private uploadChain: Promise<void> = Promise.resolve();
  private uploadsSent = new Map<number, UploadInfo>();
  private download: { buf: Uint8Array | null; got: number; total: number } | null = null;
  /** A download's blobs kept across a drop: named in the rejoin's Client_Username `r` (section 8.4). */
  private resume: { list: { i: number; h: bigint }[]; blobs: Map<bigint, Uint8Array> } | null = null;
  private joinWaiter: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private phase: "handshake" | "admitted" | "playing" | "leaving" | "done" = "handshake";
  private leaving = false;
  private silence: any = null;
  private lastNotice = "";
  private lastDisconnect: RefusedError | null = null;
  private reconnecting = false;
  private rejoining = false;
  private rejoinWhy = "";
  private lastEmitted = -1;
  private heldTick = -1;
  private catchingUp = false;

  constructor(private url: string, private opts: JoinOptions) {}

  /** Adds a listener; as many as wanted. Returns a function that removes it. */
  on<K extends keyof Events>(ev: K, fn: Events[K]): () => void {
    if (!this.listeners.has(ev)) this.listeners.set(ev, new Set());
    this.listeners.get(ev)!.add(fn);
    return () => this.off(ev, fn);
  }
  off<K extends keyof Events>(ev: K, fn: Events[K]): void {
    this.listeners.get(ev)?.delete(fn);
  }
  private emit(ev: keyof Events, ...args: unknown[]): void {
    for (const fn of [...(this.listeners.get(ev) ?? [])]) {
      try {
        fn(...args);
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }

  /** Sends a command; resolves with the tick the host stamped it for. `map` -1 is the world scope. */
  send(kind: number, payload: Uint8Array = new Uint8Array(0), map = -1): Promise<number> {
    if (this.closed) return Promise.reject(new ConnectionError("the session is closed"));
    return new Promise((resolve, reject) => {
      this.sends.push({ map, kind, payload, sent: false, resolve, reject });
      this.flushSends();
    });
  }

  /** Sends a chat line; resolves when the host relayed it back. */
  chat(text: string): Promise<void> {
    if (this.closed) return Promise.reject(new ConnectionError("the session is closed"));
    return new Promise((resolve, reject) => {
      this.chats.push({ text: text.trim(), sent: false, resolve, reject });
      this.flushSends();
    });
  }

  /**
   * Writes the commands and chat lines that wait: a command only once the session plays (after
   * its Client_WorldReady), a chat line once it is admitted. Sent earlier, during a rejoin's
   * handshake or download, the host takes either as a wrong packet (BadPacket) and drops the
   * connection; a game's timer sends them whenever it likes, so they wait here instead.
   */
  private flushSends(): void {
    if (!this.conn || this.leaving) return;
    // Not while a held rejoin catches up: its tick listeners may send, and Client_WorldReady is not out yet.
    if (this.phase === "playing" && !this.catchingUp) {
      for (const c of this.sends) if (!c.sent) ((c.sent = true), this.write(C.Command, { d: c.payload, k: c.kind, m: c.map }));
    }
    if (this.phase === "playing" || this.phase === "admitted") {
      for (const c of this.chats) if (!c.sent) ((c.sent = true), this.write(C.Chat, { t: c.text }));
    }
  }

  /** Leaves on purpose (section 6.5): Client_Leave, then waits up to 2 s for the host to close. */
  async leave(why = "bye"): Promise<void> {
    if (this.closed) return;
    this.leaving = true;
    this.phase = "leaving";
    const conn = this.conn;
    this.write(C.Leave, { w: why });
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => (conn?.close(), resolve()), 2000);
      this.on("close", () => (clearTimeout(t), resolve()));
      if (!conn) (clearTimeout(t), resolve());
    });
    this.finish();
  }

  /** Drops the connection as a network failure would (for tests): the session rejoins with its token. */
  dropConnection(): void {
    this.conn?.close();
  }

  /** Closes the connection without a leave (the host counts a drop). */
  close(): void {
    this.leaving = true;
    this.conn?.close();
    this.finish();
  }

  // ---- connection and handshake ----

  /** @internal */
  async _connect(rejoin: boolean): Promise<void> {
    if (rejoin && !this.ready && this.download?.buf) {
      // A download that dropped: the blobs it got whole and verified are named at the rejoin (8.4).
      this.resume = heldBlobs(this.download.buf.subarray(0, this.download.got), this.resume?.blobs);
    }
    const conn = await dial(this.url, { fingerprint: this.opts.fingerprint });
    this.conn = conn;
    this.inbuf = new Uint8Array(0);
    this.chain = Promise.resolve();
    this.phase = "handshake";
    this.lastDisconnect = null;
    this.rejoining = rejoin;
    conn.onData = (b) => this.onBytes(conn, b);
    conn.onClose = (err) => this.onClosed(conn, err);
    const done = new Promise<void>((resolve, reject) => (this.joinWaiter = { resolve, reject }));
    const handshake = setTimeout(() => {
      if (this.phase === "handshake") this.failJoin(new TimeoutError("no answer from the host within 15 s of the handshake"));
    }, 15000);
    const whole = setTimeout(() => this.failJoin(new TimeoutError("the join took longer than 5 minutes")), 300000);
    this.write(C.Protocol, { v: PROTOCOL_VERSION });
    try {
      await done;
    } finally {
      clearTimeout(handshake);
      clearTimeout(whole);
      this.joinWaiter = null;
    }
  }

  private failJoin(e: Error): void {
    const w = this.joinWaiter;
    if (!w) return;
    this.joinWaiter = null;
    this.conn?.close();
    w.reject(e);
  }

  private write(id: number, body: Value): void {
    if (this.leaving && id !== C.Leave) return;
    this.conn?.write(frame(id, body));
  }

  private onBytes(conn: Conn, b: Uint8Array): void {
    if (conn !== this.conn) return;
    const buf = new Uint8Array(this.inbuf.length + b.length);
    buf.set(this.inbuf);
    buf.set(b, this.inbuf.length);
    let p = 0;
    const dv = new DataView(buf.buffer);
    while (buf.length - p >= 4) {
      const len = dv.getUint32(p);
      if (len === 0 || len > MAX_FRAME) return this.bad(new ProtocolError(`a frame of ${len} bytes`));
      if (buf.length - p - 4 < len) break;
      const id = buf[p + 4];
      const body = buf.subarray(p + 5, p + 4 + len);
      p += 4 + len;
      let fields: Record<string, Value>;
      try {
        fields = asMap(decode(body));
      } catch (e) {
        return this.bad(new ProtocolError(`packet ${id}: ${(e as Error).message}`));
      }
      // A packet of a connection that is gone by its turn (a drop, a rejoin since) is not handled.
      this.chain = this.chain.then(() => (conn === this.conn ? this.handle(id, fields) : undefined)).catch((e) => (conn === this.conn ? this.bad(e) : undefined));
    }
    this.inbuf = buf.slice(p);
    this.resetSilence();
  }

  private resetSilence(): void {
    if (this.phase === "handshake") return;
    clearTimeout(this.silence);
    this.silence = setTimeout(() => this.bad(new TimeoutError("nothing from the host for 30 s")), 30000);
  }

  private bad(e: Error): void {
    const err = e instanceof LockhostError ? e : new ProtocolError(e.message);
    if (this.joinWaiter) return this.failJoin(err);
    this.dropped(err);
  }

  private onClosed(conn: Conn, err?: Error): void {
    if (conn !== this.conn) return;
    // After the packets already read (a Server_Disconnect before the close names the reason).
    this.chain = this.chain.then(() => this.closedNow(conn, err));
  }

  private closedNow(conn: Conn, err?: Error): void {
    if (conn !== this.conn) return;
    clearTimeout(this.silence);
    this.conn = null;
    const reason = this.lastDisconnect ?? (err instanceof LockhostError ? err : new ConnectionError(err ? err.message : "the host closed the connection"));
    if (this.joinWaiter) return this.failJoin(reason);
    if (this.leaving) return this.finish();
    this.dropped(reason);
  }

  /** The connection is gone after the join: rejoin with the token, or close. */
  private dropped(err: LockhostError): void {
    this.conn?.close();
    this.conn = null;
    clearTimeout(this.silence);
    const forMs = this.opts.reconnectForMs ?? 120000;
    const refused = err instanceof RefusedError && err.reason !== REJOIN_AFTER;
    if (this.closed || this.leaving || refused || !this.token || forMs <= 0 || this.reconnecting) {
      if (!this.reconnecting) this.finish(err);
      return;
    }
    void this.reconnect(forMs, err);
  }

  private async reconnect(forMs: number, first: LockhostError): Promise<void> {
    const err = await this.rejoinLoop(forMs, first);
    if (err) this.finish(err);
  }

  /** Rejoins with the token until it works or forMs pass: null, or the error to close with. */
  private async rejoinLoop(forMs: number, first: Error): Promise<LockhostError | null> {
    this.reconnecting = true;
    const until = Date.now() + forMs;
    let last: Error = first;
    try {
      for (let attempt = 0; Date.now() < until && !this.closed; attempt++) {
        await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
        try {
          await this._connect(true);
          return null;
        } catch (e) {
          last = e as Error;
          if (e instanceof RefusedError && e.reason !== 8 && e.reason !== 14 && e.reason !== 10) break;
        }
      }
    } finally {
      this.reconnecting = false;
    }
    // A host that closed and never came back: its reason, not the last refused connect.
    if (first instanceof RefusedError && !(last instanceof RefusedError)) last = first;
    return last instanceof LockhostError ? last : new ConnectionError(last.message);
  }

  /** @internal The first join failed: after an admission (a token), a drop rejoins and resumes; else the error. */
  async _rejoinAfterFirst(e: Error): Promise<Error | null> {
    const forMs = this.opts.reconnectForMs ?? 120000;
    if (!this.token || forMs <= 0 || this.closed || (e instanceof RefusedError && e.reason !== REJOIN_AFTER)) return e;
    return this.rejoinLoop(forMs, e);
  }

  private finish(err?: LockhostError): void {
    if (this.closed) return;
    this.closed = true;
    this.phase = "done";
    clearTimeout(this.silence);
    const e = err ?? new ConnectionError("the session is closed");
    for (const s of this.sends.splice(0)) s.reject(e);
    for (const c of this.chats.splice(0)) c.reject(e);
    this.emit("close", err);
  }

  // ---- packets ----

  private async handle(id: number, f: Record<string, Value>): Promise<void> {
    switch (id) {
      case S.ModList: return this.onModList(f);
      case S.Clock: return this.write(C.Clock, { c: nowMicros(), n: num(f.n) });
      case S.DefsOK: return this.onDefsOK(f);
      case S.Session: return this.onSession(f);
      case S.Disconnect: {
        const e = new RefusedError(num(f.r), str(f.m), bin(f.s));
        this.lastDisconnect = e;
        if (this.joinWaiter) return this.failJoin(e);
        if (e.reason === REJOIN_AFTER) {
          // The host is shutting down: one that restarts from its save knows the token (a restart,
          // an update), so this is a drop like any other: rejoin with the token while it may come back.
          const conn = this.conn;
          this.conn = null;
          conn?.close();
          return this.dropped(e);
        }
        this.leaving = true; // answer nothing more; the host closes
        this.conn?.close();
        this.conn = null;
        return this.finish(e);
      }
      case S.Keepalive: return this.write(C.Keepalive, { h: f.h ?? 0, q: num(f.q) });
      case S.PlayerList: return this.onPlayers(f);
      case S.Notice: {
        const n = { kind: num(f.k), text: str(f.t) };
        this.lastNotice = n.text;
        return this.emit("notice", n);
      }
      case S.Chat: {
        const line = { name: str(f.n), playerId: num(f.p), text: str(f.t) };
        if (line.playerId === this.playerId) {
          const i = this.chats.findIndex((c) => c.text === line.text);
          if (i >= 0) this.chats.splice(i, 1)[0].resolve();
        }
        return this.emit("chat", line);
      }
      case S.Desync: {
        return this.emit("desync", {
          state: num(f.s), playerId: num(f.p), name: str(f.n), tick: num(f.t), maps: arr(f.m).map((x) => num(x)), world: bool(f.w), repairMs: num(f.r),
        });
      }
      case S.Tick: return this.onTick(f);
      case S.WorldData: return this.onWorldData(f);
      case S.Resync: return this.onResync(f);
      case S.UploadRequest: return this.onUploadRequest(f);
      case S.UploadResult: return this.onUploadResult(f);
      // Section 10.1: this client keeps no copies of its state to explain
      // a desync with; saying so spares the host its wait.
      case S.ExplainRequest:
        return this.write(C.ExplainReply, { e: "this client keeps nothing to explain desyncs with", q: num(f.q) });
    }
    throw new ProtocolError(`unknown packet ${id}`);
  }

  private onModList(f: Record<string, Value>): void {
    const challenge = bin(f.c);
    const arbChallenge = bin(f.a);
    const bits = num(f.b);
    const defs = this.opts.defs
      ? this.opts.defs.map((d) => ({ c: d.count, h: d.hash, t: d.type }))
      : arr(f.d).map((v) => {
          const d = asMap(v);
          return { c: num(d.c), h: u64(d.h), t: str(d.t) };
        });
    this.write(C.Defs, { d: defs });
    let proof: Uint8Array | null = null;
    if (challenge.length && this.opts.password !== undefined) proof = passwordProof(this.opts.password, challenge);
    let aProof: Uint8Array | undefined;
    if (this.opts.arbiterSecret !== undefined) {
      if (!arbChallenge.length) throw new LockhostError("the host sent no arbiter challenge: it is not a relay host with an arbiter secret");
      aProof = arbiterProof(this.opts.arbiterSecret, arbChallenge);
    }
    // The puzzle (6.3): solved only for a proof to send; its nonce may be 0, and is sent then too.
    let nonce: bigint | undefined;
    this.puzzleBits = 0;
    if (bits > 0 && (proof || aProof)) {
      nonce = solvePuzzle(challenge.length ? challenge : arbChallenge, bits);
      this.puzzleBits = bits;
    }
    this.usernameFields = { p: proof, w: nonce, a: aProof };
  }
  private usernameFields: Record<string, Value | undefined> = {};

  private onDefsOK(f: Record<string, Value>): void {
    this.gameName = str(f.g);
    const body: Record<string, Value | undefined> = {
      n: this.opts.name, s: !!this.opts.spectate, k: this.token, ...this.usernameFields,
      r: this.token && !this.ready && this.resume?.list.length ? this.resume.list.map((b) => ({ h: b.h, i: b.i })) : null,
    };
    // A held-world rejoin (6.6): a game we simulate, whole, not under repair or upload.
    if (this.token && this.ready && !this.opts.spectate && this.reports.length && !this.hold && !this.repair) {
      body.h = { a: this.appliedAt, c: this.reports.map((r) => ({ t: r.t, w: r.w })), t: this.tick };
    }
    this.write(C.Username, body as Value);
  }

  private async onSession(f: Record<string, Value>): Promise<void> {
    this.phase = "admitted";
    this.resetSilence();
    this.token = bin(f.k);
    this.playerId = num(f.p);
    this.hashEvery = num(f.e);
    const r = num(f.r);
    // Commands received on a dropped connection past where we stand are sent again.
    this.pending.clear();
    this.repair = null;
    this.uploads = [];
    // A repair or an upload under way went with the connection: the host asks again if it must.
    this.hold = null;
    this.flushSends();
    if (r === 1) {
      const raw = await gunzip(bin(f.c), 4 << 20);
      if (num(f.z) !== 0) throw new ProtocolError("a replay in a codec this client did not list");
      const { speed, commands } = readReplay(raw);
      const grant = num(f.t);
      for (const c of commands) {
        if (c.tick > grant) throw new ProtocolError("a replayed command past the grant");
        this.queue(c);
        if (c.player === this.playerId && this.playerId !== 0) this.matchSend(c);
      }
      this.speed = speed;
      this.granted = Math.max(this.granted, grant);
      this.catchUpThenReady(true, "held");
    } else {
      this.rejoinWhy = str(f.m);
    }
    if (r !== 1) {
      this.download = { buf: null, got: 0, total: -1 };
      // The world comes again: keep every command from here on until it is loaded.
      this.heldTick = this.ready ? this.tick : -1;
      this.ready = false;
    }
  }

  private onPlayers(f: Record<string, Value>): void {
    const action = num(f.a);
    const list = arr(f.p).map((v) => {
      const p = asMap(v);
      return { id: num(p.i), name: str(p.n), faction: num(p.f), status: num(p.s), spectator: bool(p.x), latencyMs: num(p.l) };
    });
    if (action === 0) this.players = list;
    else if (action === 1) for (const p of list) this.players = [...this.players.filter((x) => x.id !== p.id), p];
    else if (action === 2) this.players = this.players.filter((x) => !list.some((p) => p.id === x.id));
    else if (action === 3 || action === 4)
      this.players = this.players.map((x) => {
        const p = list.find((q) => q.id === x.id);
        return p ? (action === 3 ? { ...x, status: p.status } : { ...x, latencyMs: p.latencyMs }) : x;
      });
    for (const p of list) if (p.id === this.playerId && action <= 1) this.faction = p.faction;
    this.emit("players", this.players);
  }

  private queue(c: Command): void {
    if (c.tick < this.tick && this.ready) return; // already applied: never twice
    const l = this.pending.get(c.tick) ?? [];
    l.push(c);
    this.pending.set(c.tick, l);
  }

  private onTick(f: Record<string, Value>): void {
    const t = num(f.t);
    const g = num(f.g);
    if (g < t) throw new ProtocolError("a tick whose grant is below its tick");
    for (const cv of arr(f.c)) {
      const c = readCommand(cv);
      if (c.tick !== t) throw new ProtocolError("a command stamped with another tick than its packet's");
      this.queue(c);
      if (c.player === this.playerId && this.playerId !== 0) this.matchSend(c);
    }
    this.granted = Math.max(this.granted, g);
    this.speed = num(f.s);
    if (this.phase === "playing") this.pump();
  }

  private matchSend(c: Command): void {
    const i = this.sends.findIndex((s) => s.kind === c.kind && s.map === c.map && sameBytes(s.payload, c.payload));
    if (i < 0) return;
    for (const skipped of this.sends.splice(0, i)) skipped.reject(new CommandRefusedError(`the host did not stamp the command${this.lastNotice ? ": " + this.lastNotice : ""}`));
    this.sends.shift()!.resolve(c.tick);
  }

  private async onWorldData(f: Record<string, Value>): Promise<void> {
    const o = num(f.o), total = num(f.t), d = bin(f.d);
    const dl = this.repair ?? this.download;
    if (!dl) throw new ProtocolError("world data nobody asked for");
    if (dl.total < 0) {
      if (total > (this.opts.maxWorldBytes ?? 2 ** 31)) throw new ProtocolError(`a world of ${total} bytes, over this client's limit`);
      dl.total = total;
      dl.buf = new Uint8Array(total);
    }
    if (o !== dl.got || total !== dl.total || o + d.length > total) throw new ProtocolError("a world chunk out of order");
    dl.buf!.set(d, o);
    dl.got += d.length;
    if (dl === this.download) this.write(C.Ack, { r: dl.got });
    if (dl.got < dl.total) return;
    if (dl === this.repair) {
      this.repair.payload = dl.buf;
      return this.pump();
    }
    this.download = null;
    const { header, state } = await readPayload(dl.buf!, this.resume?.blobs);
    this.resume = null;
    this.faction = header.faction;
    if (!this.opts.game && this.heldTick >= header.tick) {
      // A rejoin sent the world, and the tick listeners (who run the game) stand at or past its
      // tick, having applied the same commands: go on from where they stand, no tick twice.
      for (const t of [...this.pending.keys()]) if (t < this.heldTick) this.pending.delete(t);
      for (const c of header.commands) if (c.tick >= this.heldTick) this.queue(c);
      this.tick = this.heldTick;
    } else {
      this.loadWorld(state);
      this.appliedAt = 0;
      for (const c of header.commands) this.queue(c);
    }
    this.heldTick = -1;
    this.granted = Math.max(this.granted, header.granted);
    if (this.opts.game) {
      const h = this.opts.game.hash().world;
      if (h !== header.worldHash) throw new ProtocolError(`the loaded world hashes to ${hex(h)}, the host's is ${hex(header.worldHash)}`);
    }
    this.ready = true;
    this.readyTick = this.tick;
    this.reports = [];
    this.sendReady(header.worldHash, false, this.rejoinWhy);
  }

  private loadWorld(state: WorldState): void {
    const reload = !!this.state;
    this.state = state;
    this.world = state.world;
    // Commands stamped before the world's tick are in the world.
    for (const t of [...this.pending.keys()]) if (t < state.tick) this.pending.delete(t);
    this.tick = state.tick;
    this.opts.game?.load(state);
    if (reload) this.emit("world", state);
  }

  /** A held rejoin: the replay is queued; catch up now, then WorldReady. */
  private catchUpThenReady(held: boolean, why: string): void {
    // Catch up before Client_WorldReady, with no hash report: they come after it (section 4, id 9).
    this.catchingUp = true;
    this.phase = "playing";
    try {
      this.pump(true);
    } finally {
      this.catchingUp = false;
    }
    this.readyTick = this.tick;
    const h = this.currentHash();
    this.sendReady(h ?? this.state.hash, held, why);
  }

  private currentHash(): bigint | null {
    const fn = this.opts.game ? () => this.opts.game!.hash() : this.opts.hash;
    return fn ? fn().world : null;
  }

  private sendReady(hash: bigint, held: boolean, why: string): void {
    this.write(C.WorldReady, { h: hash, t: this.tick });
    this.phase = "playing";
    this.lastAck = this.tick;
    this.flushSends();
    if (this.joinWaiter) {
      const w = this.joinWaiter;
      this.joinWaiter = null;
      w.resolve();
    }
    if (this.rejoining) {
      this.rejoining = false;
      this.emit("reconnect", { held, why });
    }
    // Listeners added right after `await join()` get every tick from here on.
    setTimeout(() => this.pump(), 0);
  }

  /** The lockstep rule (section 4, id 22): apply tick T's commands, step if granted; holds at a cut. */
  private pump(silentAck = false): void {
    if (this.phase !== "playing" || this.closed) return;
    const game = this.opts.game;
    for (;;) {
      const cmds = this.pending.get(this.tick) ?? [];
      cmds.sort((a, b) => a.seq - b.seq);
      const hold = this.hold && this.hold.tick === this.tick ? this.hold : null;
      if (game) {
        // By `q`, not by place in the list: a held rejoin's replay (6.6) starts at the first
        // command not applied, so the commands before it are not in the list.
        for (const c of cmds) {
          if (c.seq < this.appliedAt) continue;
          if (hold && c.seq >= hold.applied) break;
          game.apply(c);
          this.appliedAt = c.seq + 1;
        }
      }
      if (hold) {
        if (!game || this.appliedAt >= hold.applied || !cmds.some((c) => c.seq >= this.appliedAt)) {
          if (this.atCut()) continue;
          break;
        }
      }
      if (this.tick + 1 > this.granted) break;
      if (this.hold && this.hold.tick <= this.tick) break;
      if (game) game.step();
      this.pending.delete(this.tick);
      this.tick++;
      this.appliedAt = 0;
      // A game the session drives that reloaded an older world (a rejoin sent the world) catches
      // up silently: its listeners never see a tick twice.
      if (!game || this.tick - 1 > this.lastEmitted) this.emit("tick", this.tick - 1, cmds);
      this.lastEmitted = Math.max(this.lastEmitted, this.tick - 1);
      this.report();
    }
    if (!silentAck && this.tick !== this.lastAck && !this.opts.spectate && this.phase === "playing") {
      this.lastAck = this.tick;
      this.write(C.TickAck, { t: this.tick });
    }
  }

  /** Hash reports (9.3): at every multiple of e past the WorldReady tick, before the tick's commands. */
  private report(): void {
    if (!this.hashEvery || this.opts.spectate || this.catchingUp || this.tick % this.hashEvery !== 0 || this.tick <= this.readyTick) return;
    if (this.repair) return;
    const fn = this.opts.game ? () => this.opts.game!.hash() : this.opts.hash;
    if (!fn) return;
    const h = fn();
    this.write(C.Hashes, {
      m: h.maps.map((m) => ({ h: m.hash, m: m.id, p: m.parts ?? [] })),
      t: this.tick,
      w: h.world,
    });
    this.reports.push({ t: this.tick, w: h.world });
    if (this.reports.length > 16) this.reports.shift();
  }

  /** At a hold's cut: a repair swaps its state in, an upload saves the state. Returns whether to go on. */
  private atCut(): boolean {
    const hold = this.hold!;
    if (hold.why === "repair") {
      const rep = this.repair;
      if (!rep || !rep.payload) return false;
      const payload = rep.payload;
      this.repair = null;
      void this.swapRepair(payload, rep.full, rep.maps, hold.tick);
      return false;
    }
    const up = this.uploads.shift();
    this.hold = null;
    if (up) this.startUpload(up);
    this.holdForUpload();
    return true;
  }

  private async swapRepair(payload: Uint8Array, full: boolean, maps: number[], t: number): Promise<void> {
    const conn = this.conn;
    this.chain = this.chain.then(async () => {
      if (conn !== this.conn) return; // the connection dropped: the rejoin sends the world or the host repairs again
      const { state } = await readPayload(payload);
      if (conn !== this.conn) return;
      this.opts.game!.load(state, { full, maps });
      const h = this.opts.game!.hash().world;
      this.write(C.Resynced, { t, w: h });
      this.hold = null;
      this.emit("world", state);
      this.pump();
    });
  }

  private onResync(f: Record<string, Value>): void {
    const t = num(f.t), a = num(f.a);
    if (!this.opts.game) throw new LockhostError("the host sent a repair, and this session has no game to load it into");
    if (this.tick > t || (this.tick === t && this.appliedAt > a))
      throw new ProtocolError("a repair cut behind this client's simulation");
    this.hold = { tick: t, applied: a, why: "repair" };
    this.repair = { full: bool(f.f), maps: arr(f.m).map((x) => num(x)), buf: null, got: 0, total: -1, payload: null };
    this.pump();
  }

  // ---- the arbiter (section 14) ----

  private onUploadRequest(f: Record<string, Value>): void {
    this.activeArbiter = true;
    const req = { q: num(f.q), kind: num(f.k), tick: num(f.t), applied: num(f.a), maps: arr(f.m).map((x) => num(x)), limit: num(f.l) };
    if (!this.opts.game?.save) throw new LockhostError("the host asks for an upload, and this session's game has no save()");
    this.uploads.push(req);
    this.nextUpload();
  }

  /** Holds the simulation at the next request's cut (a world request needs none). */
  private holdForUpload(): void {
    while (this.uploads.length && !this.hold) {
      const up = this.uploads[0];
      if (up.kind === 0) {
        this.uploads.shift();
        this.startUpload(up);
      } else if (this.tick > up.tick) {
        // Past the cut: this request cannot be answered (the host cancels it).
        this.uploads.shift();
      } else {
        this.hold = { tick: up.tick, applied: up.applied, why: "upload" };
      }
    }
  }

  private nextUpload(): void {
    this.holdForUpload();
    this.pump();
  }

  /** Saves the state now (at the cut), then encodes and sends it, one upload after another. */
  private startUpload(up: { q: number; kind: number; tick: number; applied: number; maps: number[]; limit: number }): void {
    const state = this.opts.game!.save!(up.kind === 2 ? up.maps : undefined);
    if (up.kind === 0) this.state = state;
    const info = { request: up.q, kind: up.kind, tick: state.tick, applied: up.applied, bytes: 0, worldHash: state.hash };
    const conn = this.conn; // a request belongs to its connection: after a drop, the host asks again
    this.uploadChain = this.uploadChain
      .then(async () => {
        if (conn !== this.conn) return;
        const payload = await buildPayload(state);
        if (conn !== this.conn) return;
        if (payload.length > up.limit) throw new LockhostError(`the world payload of ${payload.length} bytes is over the host's limit ${up.limit}`);
        info.bytes = payload.length;
        this.uploadsSent.set(up.q, info);
        for (let o = 0; o < payload.length; o += CHUNK) {
          this.write(C.Upload, { d: payload.subarray(o, Math.min(payload.length, o + CHUNK)), o, q: up.q, t: payload.length });
        }
      })
      .catch((e) => this.emit("upload", { ...info, accepted: false, message: (e as Error).message }));
  }

  private onUploadResult(f: Record<string, Value>): void {
    const q = num(f.q), r = num(f.r), m = str(f.m);
    const info = this.uploadsSent.get(q);
    if (!info) return;
    this.uploadsSent.delete(q);
    this.emit("upload", { ...info, accepted: r === 0, message: m });
    if (info.kind === 0 && r === 0 && !this.ready) {
      // A new relay session: the world is ours; WorldReady at its tick (14.3).
      this.world = this.state.world;
      this.tick = info.tick;
      this.granted = Math.max(this.granted, info.tick);
      this.ready = true;
      this.readyTick = this.tick;
      this.sendReady(info.worldHash, false, "");
    }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function hex(h: bigint): string {
  return h.toString(16).padStart(16, "0");
}
