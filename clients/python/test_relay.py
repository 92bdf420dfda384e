"""Tests of relay mode's side of the Python client (docs/protocol.md, section 14) and of drift.

Run from this folder: python3 -m unittest
"""

import io
import os
import re
import socket
import struct
import threading
import unittest

import drift
import lockhost_client as lc
import relay_client as rc
from test_lockhost_client import SPEC, decode, step

SECRET = b"correct horse battery"


def relay_frames():
    """Section 14.8's frames: {"R2": (packet name, bytes), ...}."""
    with open(SPEC, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(r"^Relay step (R\d+), [^:\n]*: (\w+) [^\n]*\n\n```hex\n(.*?)```", re.M | re.S)
    return {m.group(1): (m.group(2), bytes.fromhex(m.group(3))) for m in pattern.finditer(text)}


class RelayFramesTest(unittest.TestCase):
    """Section 14.8, byte for byte, decoded and re-encoded by the client's own code."""

    def test_every_relay_frame_round_trips(self):
        frames = relay_frames()
        self.assertEqual(sorted(frames), [f"R{i}" for i in range(2, 10)])
        for label, (name, raw) in frames.items():
            with self.subTest(label):
                got, fields = decode(raw)
                self.assertEqual(got, name)
                self.assertEqual(lc.encode_frame(name, fields).hex(" "), raw.hex(" "))

    def test_arbiter_proof_vector(self):
        # Section 14.2's example, and the proof step R3 carries over R2's challenge.
        self.assertEqual(lc.arbiter_proof(SECRET, b"\x33" * 32).hex(),
                         "cc7f52b04cb8b7c4e7df5a6f46c9f4391cf32ce56de390af5f1cda58b816427e")
        frames = relay_frames()
        _, ml = decode(frames["R2"][1])
        _, user = decode(frames["R3"][1])
        self.assertEqual(lc.arbiter_proof(SECRET, ml["arbiterChallenge"]), user["arbiterProof"])
        self.assertEqual(lc.encode_frame("Client_Username", {"name": "arb", "arbiterProof": user["arbiterProof"]}),
                         frames["R3"][1])

    def test_keys_left_out_at_zero(self):
        # Section 1: a and z are not written at their zero value, so the
        # frames of section 15 keep their bytes.
        self.assertEqual(lc.encode_frame("Client_Username", {"name": "ann"}),
                         bytes.fromhex("0000001402 85 a16bc0 a16ea3616e6e a170c0 a172c0 a173c2".replace(" ", "")))

    def test_upload_payload_verifies_and_its_header_is_canonical(self):
        frames = relay_frames()
        _, up = decode(frames["R7"][1])
        payload = up["data"]
        self.assertEqual((up["request"], up["offset"], up["total"]), (1, 0, len(payload)))
        v = lc.PayloadVerifier(len(payload), keep=True)
        v.feed(payload)
        v.done()
        h = v.header
        self.assertEqual((h["faction"], h["tick"], h["granted"], h["commands"], h["held"]), (0, 0, 0, [], []))
        self.assertEqual(v.verified, [(0, 33, 8), (1, 65, 40)])
        self.assertEqual([len(v.kept[0]), len(v.kept[1])], [8, 40])
        # This client's header encoder writes the same bytes for the same header.
        hdr_len = struct.unpack_from(">I", payload)[0]
        self.assertEqual(lc.encode_value(lc.HEADER, h), payload[12:12 + hdr_len])
        _, ready = decode(frames["R9"][1])
        self.assertEqual(ready, {"tick": h["tick"], "worldHash": h["worldHash"]})

    def test_upload_request_and_result_examples(self):
        _, req = decode(bytes.fromhex("0000001a1d86a16100a16b01a16cce40000000a16dc0a17101a174cd0258"))
        self.assertEqual(req, {"request": 1, "kind": 1, "tick": 600, "applied": 0, "maps": [], "limit": 1 << 30})
        with self.assertRaisesRegex(lc.ProtocolError, "uint8"):
            lc.decode_frame_body(30, b"\x81\xa1\x72\xcd\x01\x00")


class DriftTest(unittest.TestCase):
    """The game is deterministic: same commands at the same ticks, same bytes and hashes."""

    def play(self, seed, ticks, cmd_seed=5):
        w = drift.World.new(seed, maps=3, side=16)
        rnd = __import__("random").Random(cmd_seed)
        for _ in range(ticks):
            w.step()
            if w.tick % 7 == 0:
                w.apply(*drift.random_command(rnd, w))
        return w

    def test_same_inputs_same_hash(self):
        a, b = self.play(3, 600), self.play(3, 600)
        self.assertEqual(a.encode_world(), b.encode_world())
        self.assertEqual([m.encode() for m in a.maps], [m.encode() for m in b.maps])
        self.assertEqual(a.hash(), b.hash())
        self.assertNotEqual(a.hash(), self.play(4, 600).hash(), "another seed, another world")
        self.assertNotEqual(a.hash(), self.play(3, 600, cmd_seed=6).hash(), "other commands, another world")

    def test_golden_hash(self):
        # Fixed here so a change of the rules, or a machine that computes
        # them differently, fails: integers only, so every machine agrees.
        # The commands are fixed too (not Python's random module).
        w = drift.World.new(3, maps=3, side=16)
        for i in range(600):
            w.step()
            if i % 5 == 0:
                w.apply(i % 3, drift.SPAWN, struct.pack(">HHhh", i * 37 % 4096, i * 91 % 4096, i % 41 - 20, i % 29 - 14))
            if i % 11 == 0:
                w.apply(i % 3, drift.POKE, struct.pack(">BBi", i % 16, i // 16 % 16, -i))
            if i % 97 == 0:
                w.apply(i % 3, drift.KICK, b"")
                w.apply(-1, drift.SCORE, struct.pack(">i", -i * 1000))
        self.assertEqual((w.tick, f"{w.hash():016x}"), (600, GOLDEN_600))

    def test_encodings_round_trip(self):
        w = self.play(9, 250)
        c = w.copy()
        self.assertEqual(c.hash(), w.hash())
        for _ in range(100):
            w.step()
            c.step()
        self.assertEqual(c.hash(), w.hash())

    def test_bad_commands_change_nothing(self):
        w = drift.World.new(1)
        before = w.hash()
        for map_id, kind, payload in [(7, drift.SPAWN, b"\0" * 8), (0, drift.SPAWN, b"\0" * 7),
                                      (0, drift.POKE, b"\xff\xff\0\0\0\1"), (0, 99, b""),
                                      (-1, drift.SPAWN, b"\0" * 8), (0, drift.SCORE, b"\0\0\0\1")]:
            self.assertFalse(w.apply(map_id, kind, payload), (map_id, kind, payload))
        self.assertEqual(w.hash(), before)

    def test_refuses_bad_encodings(self):
        good = drift.World.new(1).maps[0].encode()
        for bad in (good[:-1], good + b"\0", b"XRM1" + good[4:], good[:12] + b"\0" * (len(good) - 12) + b"\0"):
            with self.assertRaises(drift.FormatError):
                drift.Map.decode(bad)


# The world hash of test_golden_hash at tick 600, fixed from its first run:
# a change of the rules must change it on purpose.
GOLDEN_600 = "eef29455be75d9c5"


class SimTest(unittest.TestCase):
    """The lockstep order, the cut of section 14.4 and the upload payload."""

    def cmd(self, tick, seq, map_id=0, kind=drift.POKE, payload=b"\1\1\0\0\0\5"):
        return {"tick": tick, "seq": seq, "mapID": map_id, "kind": kind, "payload": payload, "player": 1}

    def test_cut_applies_exactly_the_first_commands(self):
        a = rc.Sim(drift.World.new(2))
        b = rc.Sim(drift.World.new(2))
        for s in (a, b):
            s.grant = 10
            for q in range(3):
                s.add(self.cmd(5, q, payload=struct.pack(">BBi", q, 0, 10 + q)))
            s.add(self.cmd(5, 3, kind=0xFF00, payload=b"\2"))  # SetSpeed: the host's, not the game's
        a.to_cut(5, 2)
        self.assertEqual((a.world.tick, a.applied), (5, 2))
        payload = rc.encode_payload(a.world)
        v = lc.PayloadVerifier(len(payload), keep=True)
        v.feed(payload)
        v.done()
        loaded = rc.Sim(rc.load_payload(v))
        self.assertEqual(loaded.world.hash(), a.world.hash())
        # The rest of tick 5 on the loaded copy: the same as running straight through.
        loaded.grant = 10
        loaded.add(self.cmd(5, 2, payload=struct.pack(">BBi", 2, 0, 12)))
        loaded.add(self.cmd(5, 3, kind=0xFF00, payload=b"\2"))
        loaded.run()
        b.run()
        self.assertEqual((loaded.world.tick, b.world.tick), (10, 10))
        self.assertEqual(loaded.world.hash(), b.world.hash())
        self.assertEqual(b.applied, 3)

    def test_cut_behind_is_refused(self):
        s = rc.Sim(drift.World.new(2))
        s.grant = 8
        s.run()
        with self.assertRaisesRegex(lc.ProtocolError, "past it"):
            s.to_cut(5, 0)

    def test_cut_inside_a_tick_already_applied_is_refused(self):
        # At the cut's tick, with more of its commands applied than the cut
        # includes, the client is past the cut too (section 14.4 says it
        # never is): holding there would upload a state the host does not mean.
        s = rc.Sim(drift.World.new(2))
        s.grant = 5
        s.run()
        s.add(self.cmd(5, 0, kind=0xFF00, payload=b"\0"))
        s.add(self.cmd(5, 1))
        s.run()
        with self.assertRaisesRegex(lc.ProtocolError, "past it"):
            s.to_cut(5, 1)
        s.to_cut(5, 2)  # exactly where it is

    def test_maps_payload_lists_the_requested_maps(self):
        w = drift.World.new(2, maps=4)
        payload = rc.encode_payload(w, maps=[3, 1])
        v = lc.PayloadVerifier(len(payload), keep=True)
        v.feed(payload)
        v.done()
        self.assertEqual([m["id"] for m in v.header["maps"]], [3, 1])
        self.assertEqual(v.header["worldHash"], w.hash())
        self.assertEqual([m["stateHash"] for m in v.header["maps"]], [w.map(3).hash(), w.map(1).hash()])
        with self.assertRaises(ValueError):
            rc.encode_payload(w, maps=[9])

    def test_a_tampered_map_is_caught_on_load(self):
        w = drift.World.new(2)
        w2 = w.copy()
        w2.maps[1].cells[0] += 1
        good = rc.encode_payload(w)
        # The map blob of w2 behind w's header would fail XXH64; a payload
        # whose header is re-made from w2 but claims w's state hash fails the load.
        payload = rc.encode_payload(w2)
        hdr_len = struct.unpack_from(">I", payload)[0]
        hdr = lc.decode_body(lc.HEADER, payload[12:12 + hdr_len], "header")
        hdr["maps"][1]["stateHash"] = w.maps[1].hash()
        raw = lc.encode_value(lc.HEADER, hdr)
        forged = struct.pack(">IQ", len(raw), lc.xxh64(raw)) + raw + payload[12 + hdr_len:]
        v = lc.PayloadVerifier(len(forged), keep=True)
        v.feed(forged)
        v.done()
        with self.assertRaisesRegex(lc.PayloadError, "map 1's state hash"):
            rc.load_payload(v)
        v = lc.PayloadVerifier(len(good), keep=True)
        v.feed(good)
        v.done()
        self.assertEqual(rc.load_payload(v).hash(), w.hash())


class RepairTest(unittest.TestCase):
    """Section 10 on the client's side: hold at the cut, swap the maps in, answer Client_Resynced."""

    def client(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        args = rc.parse_args(["127.0.0.1:1", "--name", "ann"])
        c = rc.GameClient(args, out=io.StringIO())
        c.conn = lc.Connection(b)
        c.ready = True
        return c, a

    def send(self, sock, name, **fields):
        sock.sendall(lc.encode_frame(name, fields))

    def test_a_corrupted_map_is_repaired(self):
        for full in (False, True):
            with self.subTest(full=full):
                good = rc.Sim(drift.World.new(6))
                good.grant = 40
                cmds = [self.cmd(30, 0), self.cmd(30, 1)]
                for cmd in cmds:
                    good.add(cmd)
                good.to_cut(30, 1)
                c, host = self.client()
                c.sim.world = drift.World.new(6)
                c.sim.world.maps[1].cells[5] += 7  # this client's copy of map 1 went wrong
                c.sim.grant = 40
                for cmd in cmds:
                    c.sim.add(cmd)
                payload = rc.encode_payload(good.world, None if full else [1])
                self.send(host, "Server_Tick", tick=31, commands=[], granted=31, speed=1)  # arrives meanwhile
                half = len(payload) // 2
                for off, part in ((0, payload[:half]), (half, payload[half:])):
                    self.send(host, "Server_WorldData", offset=off, total=len(payload), data=part)
                c.handle_common("Server_Resync", {"tick": 30, "applied": 1, "maps": [] if full else [1], "full": full})
                self.assertEqual(c.sim.world.hash(), good.world.hash())
                name, p = lc.Connection(host).recv(5)
                self.assertEqual((name, p), ("Client_Resynced", {"tick": 30, "world": good.world.hash()}))
                # The rest of tick 30 and the ticks after: in step again.
                c.sim.run()
                good.run()
                self.assertEqual((c.sim.world.tick, c.sim.world.hash()), (good.world.tick, good.world.hash()))

    def test_a_repair_of_other_maps_is_refused(self):
        c, host = self.client()
        c.sim.world = drift.World.new(6)
        c.sim.grant = 0
        payload = rc.encode_payload(drift.World.new(6), [2])
        self.send(host, "Server_WorldData", offset=0, total=len(payload), data=payload)
        with self.assertRaisesRegex(lc.PayloadError, r"holds maps \[2\], Server_Resync named \[1\]"):
            c.handle_common("Server_Resync", {"tick": 0, "applied": 0, "maps": [1], "full": False})

    def cmd(self, tick, seq):
        return {"tick": tick, "seq": seq, "mapID": 1, "kind": drift.POKE, "payload": struct.pack(">BBi", seq, 2, 9),
                "player": 1}


class DeclarationTest(unittest.TestCase):
    """Section 14.9 on the client's side, and drift's databases hashed as section 7.1 says."""

    # What "host defs scan" prints for a mod whose Defs/Commands.xml holds
    # drift's commands as XML defs:
    #   <DriftCommandDef><defName>Spawn</defName><kind>1</kind><payload>x y uint16, vx vy int16</payload></DriftCommandDef>
    #   <DriftCommandDef><defName>Poke</defName><kind>2</kind><payload>x y uint8, amount int32</payload></DriftCommandDef>
    #   <DriftCommandDef><defName>Kick</defName><kind>3</kind><payload></payload></DriftCommandDef>
    #   <DriftCommandDef><defName>Score</defName><kind>4</kind><payload>amount int32</payload></DriftCommandDef>
    SCANNED = {"type": "DriftCommandDef", "count": 4, "hash": 0x63658B488147605F}

    def test_drift_databases_hash_as_the_host_scans_them(self):
        self.assertEqual(drift.databases(), [self.SCANNED])

    def test_an_older_drift_differs(self):
        older = drift.databases(drift.COMMAND_DEFS[:3])[0]
        self.assertEqual(older["count"], 3)
        self.assertNotEqual(older["hash"], self.SCANNED["hash"])

    def client(self, *extra):
        return rc.GameClient(rc.parse_args(["127.0.0.1:1", "--name", "ann", *extra]), out=io.StringIO())

    def test_who_declares_what(self):
        secret = os.path.join(ArbiterReplayTest.tmp(self), "secret")
        with open(secret, "wb") as f:
            f.write(SECRET + b"\n")
        hosts = [{"type": "ThingDef", "count": 2, "hash": 5}]
        for name, c, announced, want in (
            ("arbiter, host lists none", self.client("--arbiter-secret-file", secret), [], drift.databases()),
            ("arbiter, host lists some", self.client("--arbiter-secret-file", secret), hosts, hosts),
            ("player, host lists none", self.client(), [], []),
            ("player, host lists some", self.client(), hosts, hosts),
            ("player of an older drift", self.client("--wrong-defs"), hosts, drift.databases(drift.COMMAND_DEFS[:3])),
        ):
            with self.subTest(name):
                self.assertEqual(c.declare(announced), want)


class ArbiterReplayTest(unittest.TestCase):
    """The arbiter against a loopback host that plays section 14.8's host side."""

    def test_new_session(self):
        frames = relay_frames()
        srv = socket.create_server(("127.0.0.1", 0))
        port = srv.getsockname()[1]
        errors, seen = [], {}

        def host():
            try:
                conn, _ = srv.accept()
                c = lc.Connection(conn)

                def want(name):
                    got = c.recv(10)
                    if got is None or got[0] != name:
                        raise AssertionError(f"want {name}, got {got}")
                    return got[1]

                want("Client_Protocol")
                conn.sendall(frames["R2"][1])
                seen["defs"] = want("Client_Defs")
                conn.sendall(step(4)[1])
                want("Client_Clock")
                conn.sendall(step(6)[1])
                user = want("Client_Username")
                if lc.encode_frame("Client_Username", user) != frames["R3"][1]:
                    raise AssertionError(f"Client_Username differs from step R3: {user}")
                for r in ("R4", "R5", "R6"):
                    conn.sendall(frames[r][1])
                up = want("Client_Upload")
                v = lc.PayloadVerifier(up["total"], keep=True)
                v.feed(up["data"])
                v.done()
                seen["world"] = rc.load_payload(v)
                seen["upload"] = up
                conn.sendall(frames["R8"][1])
                seen["ready"] = want("Client_WorldReady")
                seen["ack"] = want("Client_TickAck")
                want("Client_Leave")
                conn.close()
            except Exception as e:  # reported below
                errors.append(e)

        t = threading.Thread(target=host)
        t.start()
        secret = os.path.join(self.tmp(), "secret")
        with open(secret, "wb") as f:
            f.write(SECRET + b"\n")
        args = rc.parse_args([f"127.0.0.1:{port}", "--name", "arb", "--arbiter-secret-file", secret,
                              "--stay", "0", "--seed", "4"])
        try:
            rc.GameClient(args, out=io.StringIO()).run()
        finally:
            t.join(10)
            srv.close()
        self.assertEqual(errors, [])
        w = seen["world"]
        self.assertEqual((seen["upload"]["request"], seen["upload"]["offset"]), (1, 0))
        self.assertEqual(w.hash(), drift.World.new(4).hash(), "the arbiter uploads its new world")
        self.assertEqual(seen["ready"], {"tick": 0, "worldHash": w.hash()})
        self.assertEqual(seen["ack"], {"tick": 0})
        # R2 lists no def databases: the arbiter declares drift's (14.9).
        self.assertEqual(seen["defs"], {"databases": drift.databases()})

    def tmp(self):
        import tempfile
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        return d


if __name__ == "__main__":
    unittest.main()
