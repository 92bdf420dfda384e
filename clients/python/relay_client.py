#!/usr/bin/python3
"""A lockhost client that runs a game of its own: drift (drift.py).

Written from docs/protocol.md alone, like lockhost_client.py, whose
framing, codecs and payload checks it reuses. It joins a session as a
player that simulates: it downloads the world, loads it, checks every
map's and the world's hash against the header (section 8.3), applies the
header's queued commands and every Server_Tick's in the lockstep order
(section 4, id 22), reports its ticks (9.2) and, when the host asks for
them, its hashes (9.3), and plays random commands from a seed.

With --arbiter-secret-file it claims the arbiter role of a relay session
(section 14): it proves the secret (14.2), uploads its world when the
session has none (kind 0), a join point at the cut the host names
(kind 1) and the world-level state and maps for a repair (kind 2), and
reads each Server_UploadResult. To a relay host that lists no def
databases it declares drift's own (section 14.9), which such a host takes
as the databases every joiner must match; a player sends back the host's
list, as any client without content of its own does (section 7.2).

Every --print-every ticks (default 300) it prints its world hash,
"checkpoint tick=T world=H", as it steps to T and before it applies T's
commands, so runs can be compared tick by tick.
"""

import argparse
import random
import socket
import struct
import sys
import time
import zlib

import drift
import lockhost_client as lc

ENGINE_KINDS = 0xFF00  # section 4, id 4: kinds from here on are the host's
UPLOAD_NAMES = {0: "world", 1: "join point", 2: "maps"}  # section 5.7
RESULTS = {0: "accepted", 1: "refused", 2: "cancelled"}  # section 5.8
REPORT_EVERY = 0.05  # section 9.2: at least every 50 ms while the tick advances
STEPS_PER_TURN = 240  # ticks simulated between two looks at the socket


def gzip_blob(raw):
    """One gzip member (section 8.1, codec 0) of raw, the same bytes on every machine."""
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(raw) + c.flush()


def encode_payload(world, maps=None):
    """A world payload of section 8.1 holding world at its tick, as section 14.4 wants an upload.

    maps: the map IDs to include, in this order (kind 2), or None for
    every map of the world (kinds 0 and 1). The header has f 0, g = t,
    and no commands or held blobs.
    """
    chosen = world.maps if maps is None else [world.map(i) for i in maps]
    if any(m is None for m in chosen):
        raise ValueError("a requested map is not in the world")
    blobs = []
    raw = world.encode_world()
    wb = gzip_blob(raw)
    blobs.append(wb)
    header = {
        "faction": 0, "tick": world.tick, "granted": world.tick, "worldHash": world.hash(),
        "world": {"size": len(wb), "rawSize": len(raw), "hash": lc.xxh64(wb)},
        "maps": [], "commands": [], "held": [],
    }
    for m in chosen:
        raw = m.encode()
        b = gzip_blob(raw)
        blobs.append(b)
        header["maps"].append({"id": m.id, "blob": {"size": len(b), "rawSize": len(raw), "hash": lc.xxh64(b)},
                               "stateHash": lc.xxh64(raw)})
    hdr = lc.encode_value(lc.HEADER, header)
    return struct.pack(">IQ", len(hdr), lc.xxh64(hdr)) + hdr + b"".join(blobs)


def decode_blobs(verifier, what):
    """The world blob (the world and its map IDs) and the map blobs a verified payload holds,
    decoded; a blob that does not decode is a PayloadError naming what the payload is."""
    try:
        world, ids = drift.World.decode_world(verifier.kept[0])
        maps = [drift.Map.decode(verifier.kept[1 + i]) for i in range(len(verifier.header["maps"]))]
    except drift.FormatError as e:
        raise lc.PayloadError(f"{what} does not load: {e}") from None
    return world, ids, maps


def load_payload(verifier):
    """The world a verified payload holds (keep=True), its hashes checked against the header (8.3)."""
    h = verifier.header
    if h["held"]:
        raise lc.PayloadError("the header lists held blobs, and this client asked to resume none")
    world, ids, maps = decode_blobs(verifier, "the world")
    if world.tick != h["tick"]:
        raise lc.PayloadError(f"the world blob is at tick {world.tick}, the header says {h['tick']}")
    if ids != [m["id"] for m in h["maps"]]:
        raise lc.PayloadError(f"the world blob lists maps {ids}, the header {[m['id'] for m in h['maps']]}")
    for m, hm in zip(maps, h["maps"]):
        if m.id != hm["id"]:
            raise lc.PayloadError(f"map blob {hm['id']} holds map {m.id}")
        if m.hash() != hm["stateHash"]:
            raise lc.PayloadError(f"map {m.id}'s state hash is {m.hash():016x}, the header says {hm['stateHash']:016x}")
    world.maps = maps
    if world.hash() != h["worldHash"]:
        raise lc.PayloadError(f"the world hash is {world.hash():016x}, the header says {h['worldHash']:016x}")
    return world


def swap_in(world, verifier, full):
    """The world after a repair's payload (section 10): the whole world when full, else the
    world-level state and the maps the payload holds, each checked against the header."""
    h = verifier.header
    if full:
        return load_payload(verifier)
    fresh, ids, maps = decode_blobs(verifier, "the repair")
    if fresh.tick != h["tick"]:
        raise lc.PayloadError(f"the repair's world blob is at tick {fresh.tick}, the header says {h['tick']}")
    old = {m.id: m for m in world.maps}
    for m, hm in zip(maps, h["maps"]):
        if m.id != hm["id"] or m.hash() != hm["stateHash"]:
            raise lc.PayloadError(f"the repair's map {hm['id']} does not match its header's state hash")
        old[m.id] = m
    missing = [i for i in ids if i not in old]
    if missing:
        raise lc.PayloadError(f"the repair's world lists maps {missing} that neither this client nor it holds")
    fresh.maps = [old[i] for i in ids]
    # The world hash is not checked here: a map the repair left alone may
    # still differ, and the host, reading Client_Resynced, then sends the
    # whole world (section 10).
    return fresh


class Sim:
    """The lockstep simulation: the world, the commands received and the grant.

    The rule of section 4, id 22: at tick T, apply every command stamped T
    in q order, then step to T+1 when T+1 is at most the latest grant.
    """

    def __init__(self, world=None, on_checkpoint=None):
        self.world = world
        self.pending = {}  # tick -> {seq: (mapID, kind, payload)}
        self.grant = 0
        self.applied = 0  # game commands applied
        self.done = (None, 0)  # (tick, the seq after the last command applied at it)
        self.on_checkpoint = on_checkpoint

    def add(self, cmd):
        t = cmd["tick"]
        if self.world is not None and t < self.world.tick:
            return  # before the state we hold: already in it
        self.pending.setdefault(t, {})[cmd["seq"]] = (cmd["mapID"], cmd["kind"], cmd["payload"])

    def apply_current(self, below=None):
        """Applies the commands stamped with the world's tick (those with seq below `below` only, if given)."""
        cmds = self.pending.get(self.world.tick)
        if not cmds:
            return
        for seq in sorted(cmds):
            if below is not None and seq >= below:
                break
            map_id, kind, payload = cmds.pop(seq)
            self.done = (self.world.tick, seq + 1)
            if kind < ENGINE_KINDS:  # engine commands are the host's (SetSpeed)
                self.world.apply(map_id, kind, payload)
                self.applied += 1

    def run(self, limit=STEPS_PER_TURN):
        """Simulates toward the grant, at most `limit` steps; returns the steps taken."""
        steps = 0
        while True:
            self.apply_current()
            if self.world.tick >= self.grant or steps >= limit:
                return steps
            self._step()
            steps += 1

    def _step(self):
        self.pending.pop(self.world.tick, None)
        self.world.step()
        if self.on_checkpoint:
            self.on_checkpoint(self.world)

    def to_cut(self, tick, applied):
        """Holds the simulation exactly at (tick, applied) (section 14.4)."""
        w = self.world
        if w.tick > tick or (w.tick == tick and self.done[0] == tick and self.done[1] > applied):
            done = self.done[1] if self.done[0] == w.tick else 0
            raise lc.ProtocolError(f"asked for a cut at tick {tick} after {applied} of its commands, and this client "
                                   f"is past it, at tick {w.tick} after {done}")
        if self.grant < tick:
            raise lc.ProtocolError(f"asked for a cut at tick {tick} beyond the grant {self.grant}")
        while w.tick < tick:
            self.apply_current()
            self._step()
        self.apply_current(below=applied)


class GameClient(lc.Client):
    """A player that simulates drift, and the arbiter when it holds the secret."""

    def __init__(self, args, out=sys.stdout):
        super().__init__(args, out)
        self.sim = Sim(on_checkpoint=self.checkpoint)
        self.secret = None
        if args.arbiter_secret_file:
            with open(args.arbiter_secret_file, "rb") as f:
                self.secret = f.readline().rstrip(b"\r\n")
            if not self.secret:
                raise ValueError(f"{args.arbiter_secret_file}: the first line is empty")
        self.arbiter_active = False
        self.uploads = {}  # request -> (kind, tick, applied, bytes)
        self.results = []  # (request, result name, message)
        self.rnd = random.Random(args.seed)
        self.sent = 0
        self.reported = None
        self.report_at = 0.0
        self.last_hash = None
        self.hashes_sent = 0
        self.hash_last = 0
        self.first_chunk = None

    # ------------------------------------------------------------ output

    def checkpoint(self, world):
        """Called after each step: the checkpoint line and the hash report (sections 9.3 and 10)."""
        t = world.tick
        corrupt = self.args.corrupt_map
        if corrupt and corrupt[1] == t and world.map(corrupt[0]) is not None:
            # For checks of the repair: this client's copy of one map goes wrong.
            world.map(corrupt[0]).cells[0] ^= 0x5A5A
            self.step(f"corrupted map {corrupt[0]} at tick {t} on purpose")
        if self.args.print_every and t % self.args.print_every == 0:
            h = world.hash()
            self.last_hash = (t, h)
            print(f"checkpoint tick={t} world={h:016x}", file=self.out, flush=True)
        if self.hash_every and self.ready and t % self.hash_every == 0 and t > self.hash_last:
            self.conn.send("Client_Hashes", tick=t, world=world.hash(),
                           maps=[{"mapID": i, "hash": h, "parts": []} for i, h in world.map_hashes()])
            self.hash_last = t
            self.hashes_sent += 1

    # ------------------------------------------------------------ packets

    def handle_common(self, name, p):
        if name == "Server_Tick":
            if p["granted"] < p["tick"]:
                raise lc.ProtocolError(f"Server_Tick: grant {p['granted']} below tick {p['tick']}")
            for cmd in p["commands"]:
                if cmd["tick"] != p["tick"]:
                    raise lc.ProtocolError(f"Server_Tick: a command stamped {cmd['tick']} in tick {p['tick']}")
                self.sim.add(cmd)
            self.commands += len(p["commands"])
            self.tick = max(self.tick, p["tick"])
            self.sim.grant = max(self.sim.grant, p["granted"])
            self.grant = self.sim.grant
            self.speed = p["speed"]
        elif name == "Server_UploadRequest":
            self.upload(p)
        elif name == "Server_UploadResult":
            self.upload_result(p)
        elif name == "Server_Resync":
            self.repair(p)
        else:
            super().handle_common(name, p)

    def upload(self, req):
        if self.secret is None:
            raise lc.ProtocolError("Server_UploadRequest to a client that did not claim the arbiter role")
        kind = req["kind"]
        if kind not in UPLOAD_NAMES:
            raise lc.ProtocolError(f"Server_UploadRequest of unknown kind {kind}")
        if req["request"] == 0 or req["request"] in self.uploads:
            raise lc.ProtocolError(f"Server_UploadRequest numbered {req['request']} again")
        if not self.arbiter_active:
            self.arbiter_active = True
            self.step("this client is the active arbiter (its first upload request)")
        if kind == 0:
            if self.sim.world is None:
                self.sim.world = drift.World.new(self.args.seed, maps=self.args.maps, side=self.args.side)
            world = self.sim.world
        else:
            if self.sim.world is None:
                raise lc.ProtocolError(f"asked for a {UPLOAD_NAMES[kind]} before this client holds a world")
            self.sim.to_cut(req["tick"], req["applied"])
            world = self.sim.world
        started = time.monotonic()
        payload = encode_payload(world, req["maps"] if kind == 2 else None)
        if len(payload) > req["limit"]:
            raise lc.ProtocolError(f"the {UPLOAD_NAMES[kind]} is {len(payload)} bytes, over the request's limit "
                                   f"of {req['limit']}")
        for off in range(0, len(payload), lc.MAX_CHUNK_DATA):
            self.conn.send("Client_Upload", request=req["request"], offset=off, total=len(payload),
                           data=payload[off:off + lc.MAX_CHUNK_DATA])
        self.uploads[req["request"]] = (kind, world.tick, req["applied"], len(payload))
        self.step(f"upload {req['request']}: {UPLOAD_NAMES[kind]} at tick {world.tick} (applied {req['applied']}), "
                  f"{len(payload)} bytes, world {world.hash():016x}, encoded and sent in "
                  f"{(time.monotonic() - started) * 1000:.0f} ms")

    def repair(self, rs):
        """Section 10: hold at the cut, take the repair's payload, swap it in, answer Client_Resynced."""
        if self.sim.world is None or not self.ready:
            raise lc.ProtocolError("Server_Resync before Client_WorldReady")
        if not rs["full"] and not rs["maps"]:
            raise lc.ProtocolError("Server_Resync with no maps that is not full")
        self.sim.to_cut(rs["tick"], rs["applied"])
        before = self.sim.world.hash()
        verifier, received = None, 0
        deadline = time.monotonic() + lc.SILENCE_LIMIT
        while verifier is None or received < verifier.total:
            got = self.conn.recv(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise TimeoutError(f"a repair's payload stalled for {lc.SILENCE_LIMIT:.0f} s")
            name, p = got
            if name != "Server_WorldData":
                if name == "Server_Resync":
                    raise lc.ProtocolError("a Server_Resync during a repair's payload")
                self.handle_common(name, p)  # commands keep coming; nothing is simulated meanwhile
                continue
            if verifier is None:
                if p["total"] > self.args.max_world:
                    raise lc.PayloadError(f"a repair of {p['total']} bytes, over this client's limit")
                verifier = lc.PayloadVerifier(p["total"], keep=True)
            if p["total"] != verifier.total or p["offset"] != received:
                raise lc.ProtocolError(f"a repair chunk at {p['offset']} of {p['total']}, expected {received} "
                                       f"of {verifier.total}")
            verifier.feed(p["data"])  # section 9.1: a repair's chunks are not acknowledged
            received += len(p["data"])
            deadline = time.monotonic() + lc.SILENCE_LIMIT
        verifier.done()
        h = verifier.header
        if h["tick"] != rs["tick"]:
            raise lc.PayloadError(f"a repair at tick {h['tick']}, Server_Resync said {rs['tick']}")
        ids = [m["id"] for m in h["maps"]]
        if not rs["full"] and ids != rs["maps"]:
            raise lc.PayloadError(f"a repair holds maps {ids}, Server_Resync named {rs['maps']}")
        self.sim.world = swap_in(self.sim.world, verifier, rs["full"])
        w = self.sim.world
        self.conn.send("Client_Resynced", tick=w.tick, world=w.hash())
        match = "matches" if w.hash() == h["worldHash"] else f"differs from the header's {h['worldHash']:016x}"
        self.step(f"repaired at tick {w.tick} (applied {rs['applied']}): "
                  f"{'the whole world' if rs['full'] else 'maps ' + str(ids)}, world {before:016x} -> "
                  f"{w.hash():016x}, which {match}")

    def upload_result(self, p):
        q = p["request"]
        if q not in self.uploads:
            raise lc.ProtocolError(f"Server_UploadResult for request {q}, which this client never answered")
        result = RESULTS.get(p["result"], str(p["result"]))
        self.results.append((q, result, p["message"]))
        self.step(f"upload {q} {result}" + (f": {p['message']}" if p["message"] else ""))

    # ------------------------------------------------------------ phases

    def run(self):
        a = self.args
        sock = socket.create_connection((a.host, a.port), timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = lc.Connection(sock)
        self.step(f"connected to {a.host}:{a.port}")
        try:
            self.handshake()
            if not self.world_from_upload():
                self.download(keep=True, first=self.first_chunk)
                self.sim.world = load_payload(self.verifier)
                self.step(f"world loaded at tick {self.sim.world.tick}: {len(self.sim.world.maps)} maps, "
                          f"every map hash and the world hash {self.sim.world.hash():016x} match the header")
                for entry in self.header["commands"]:
                    for cmd in entry["commands"]:
                        self.sim.add(cmd)
                self.sim.grant = max(self.sim.grant, self.header["granted"])
            self.play()
            self.leave()
        finally:
            sock.close()

    def handshake(self):
        a, c = self.args, self.conn
        c.send("Client_Protocol", protocol=lc.PROTOCOL_VERSION)
        _, ml = self.expect({"Server_ModList"}, 10, "Server_ModList")
        challenge, arb = ml["passwordChallenge"], ml["arbiterChallenge"]
        self.step(f"mod list: {len(ml['databases'])} def databases, password "
                  f"{'required' if challenge else 'not required'}, arbiter challenge {'sent' if arb else 'not sent'}")
        if challenge and a.password is None:
            raise lc.Refused("the host requires a password; pass --password")
        proof = b""
        if self.secret is not None:
            if not arb:
                # Section 14.2: a host that sent no a is no relay host with a secret.
                raise lc.Refused("the host sent no arbiter challenge: it is not a relay host with an arbiter secret")
            if len(arb) != 32:
                raise lc.ProtocolError(f"an arbiter challenge of {len(arb)} bytes, not 32")
            proof = lc.arbiter_proof(self.secret, arb)
        c.send("Client_Defs", databases=self.declare(ml["databases"]))
        _, ok = self.expect({"Server_DefsOK"}, 10, "Server_DefsOK")
        pw = lc.password_proof(a.password, challenge) if challenge else b""
        c.send("Client_Username", name=a.name, passwordProof=pw, arbiterProof=proof)
        _, s = self.expect({"Server_Session"}, 10, "Server_Session")
        self.player_id = s["playerID"]
        self.hash_every = s["hashEvery"]
        self.step(f"admitted as player {s['playerID']}{' claiming the arbiter role' if proof else ''}, "
                  f"hashes every {s['hashEvery']} ticks")

    def declare(self, announced):
        """The def databases for Client_Defs: the host's list (7.2), or drift's own (14.9)."""
        if self.args.wrong_defs:
            # For checks of the Defs refusal: an older drift, without its Score command.
            dbs = drift.databases(drift.COMMAND_DEFS[:3])
            self.step(f"declaring the def databases of a drift without Score: {dbs[0]['count']} "
                      f"{drift.COMMAND_DEF_TYPE}, hash {dbs[0]['hash']:016x}")
            return dbs
        if self.secret is None or announced:
            return announced
        # An arbiter, and the host lists none: a host that takes its
        # databases from the arbiter has not taken any yet (section 14.9).
        dbs = drift.databases()
        self.step(f"the host lists no def databases: declaring drift's, {dbs[0]['count']} "
                  f"{drift.COMMAND_DEF_TYPE}, hash {dbs[0]['hash']:016x}")
        return dbs

    def world_from_upload(self):
        """For an arbiter: waits for the first packet that says whether the host wants the world (14.3).

        Returns True when this client's world became the session's, False
        when a world payload comes instead (the session has one).
        """
        if self.secret is None:
            return False
        deadline = time.monotonic() + lc.SILENCE_LIMIT
        while True:
            got = self.conn.recv(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise TimeoutError("neither a world nor an upload request came from the host")
            name, p = got
            if name == "Server_WorldData":
                self.first_chunk = p  # a standby arbiter: the session has its world
                return False
            self.handle_common(name, p)
            if self.results and self.results[-1][1] == "accepted" and self.uploads[self.results[-1][0]][0] == 0:
                w = self.sim.world
                self.sim.grant = max(self.sim.grant, w.tick)
                self.conn.send("Client_WorldReady", tick=w.tick, worldHash=w.hash())
                self.ready = True
                self.step(f"WorldReady tick={w.tick} hash={w.hash():016x} (the uploaded world)")
                return True

    def play(self):
        a, c, sim = self.args, self.conn, self.sim
        if not self.ready:
            # Catch up to the latest grant, answering the host between batches.
            while sim.run() == STEPS_PER_TURN:
                self.drain(0.001)
            c.send("Client_WorldReady", tick=sim.world.tick, worldHash=sim.world.hash())
            self.ready = True
            self.step(f"WorldReady tick={sim.world.tick} hash={sim.world.hash():016x} grant={sim.grant}")
        self.report(force=True)
        if a.rogue_upload:
            # For checks of the arbiter rule: an upload nobody asked for,
            # from a client that did not prove the secret (section 4, id 13).
            payload = encode_payload(sim.world)
            c.send("Client_Upload", request=1, offset=0, total=len(payload), data=payload[:lc.MAX_CHUNK_DATA])
            self.step(f"sent an upload nobody asked for ({len(payload)} bytes)")
        end = time.monotonic() + a.stay
        every = 1.0 / a.commands_per_second if a.commands_per_second > 0 else None
        next_cmd = time.monotonic() + (every or 0)
        while time.monotonic() < end:
            self.drain(0.01)
            if time.monotonic() - c.last_heard > lc.SILENCE_LIMIT:
                raise TimeoutError(f"the host sent nothing for {lc.SILENCE_LIMIT:.0f} s")
            sim.run()
            self.report()
            if every and time.monotonic() >= next_cmd:
                map_id, kind, payload = drift.random_command(self.rnd, sim.world)
                c.send("Client_Command", mapID=map_id, kind=kind, payload=payload)
                self.sent += 1
                next_cmd += every
        w = sim.world
        last = f", last checkpoint tick={self.last_hash[0]} world={self.last_hash[1]:016x}" if self.last_hash else ""
        self.step(f"played {a.stay:g} s: at tick {w.tick} (grant {sim.grant}), sent {self.sent} command(s), "
                  f"applied {sim.applied} game command(s), {self.commands} command(s) came in Server_Tick, "
                  f"{len(self.uploads)} upload(s){last}")

    def drain(self, wait):
        """Handles every packet that arrives within wait seconds, then every one already buffered."""
        got = self.conn.recv(wait)
        while got is not None:
            self.handle_common(*got)
            got = self.conn.recv(0)  # a zero wait reads only what is buffered

    def report(self, force=False):
        """Client_TickAck with the tick simulated to (section 9.2)."""
        now = time.monotonic()
        t = self.sim.world.tick
        if t != self.reported and (force or now >= self.report_at):
            self.conn.send("Client_TickAck", tick=t)
            self.reported = t
            self.report_at = now + REPORT_EVERY
            self.tick_acks += 1


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Play drift in a lockhost session, or be its arbiter.")
    ap.add_argument("address", help="HOST[:PORT] (default port 30502)")
    ap.add_argument("--name", default="PyDrift", help="username: 3 to 15 letters, digits or _")
    ap.add_argument("--password", help="the session password, if the host has one")
    ap.add_argument("--arbiter-secret-file", help="claim the arbiter role with the secret on this file's first line")
    ap.add_argument("--stay", type=float, default=20.0, help="seconds to play after WorldReady (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random commands, and of a new world")
    ap.add_argument("--commands-per-second", type=float, default=2.0, help="random commands sent a second (0: none)")
    ap.add_argument("--maps", type=int, default=3, help="maps of a new world (arbiter)")
    ap.add_argument("--side", type=int, default=16, help="side of a new world's maps, in cells (arbiter)")
    ap.add_argument("--print-every", type=int, default=300, help="ticks between checkpoint lines (0: none)")
    ap.add_argument("--rogue-upload", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--corrupt-map", metavar="MAP@TICK", help=argparse.SUPPRESS)
    ap.add_argument("--wrong-defs", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--max-world", type=int, default=lc.DEFAULT_MAX_WORLD, help="largest world payload accepted")
    a = ap.parse_args(argv)
    host, _, port = a.address.rpartition(":")
    if not host or port.startswith("]") or not port.isdigit():
        host, port = a.address, str(lc.DEFAULT_PORT)
    a.host, a.port = host.strip("[]"), int(port)
    a.spectate, a.chat = False, None
    if a.corrupt_map:
        m, _, t = a.corrupt_map.partition("@")
        try:
            a.corrupt_map = (int(m), int(t))
        except ValueError:
            ap.error("--corrupt-map wants MAP@TICK, two integers")
    if not 1 <= a.maps <= lc.MAX_HEADER_MAPS or not 1 <= a.side <= drift.MAX_SIDE:
        ap.error(f"--maps must be 1 to {lc.MAX_HEADER_MAPS} and --side 1 to {drift.MAX_SIDE}")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        client = GameClient(a)
        client.run()
    except lc.Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    except lc.PayloadError as e:
        print(f"error: the world payload failed verification: {e}", file=sys.stderr)
        return 1
    except lc.ProtocolError as e:
        print(f"error: the host sent a wrong packet: {e}", file=sys.stderr)
        return 1
    except EOFError:
        print("error: the host closed the connection without a word.", file=sys.stderr)
        return 1
    except (OSError, TimeoutError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
