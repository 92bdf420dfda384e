"""Tests of the Python client against docs/protocol.md's own bytes.

Run from this folder: python3 -m unittest
"""

import gzip
import os
import re
import socket
import struct
import threading
import types
import unittest

import lockhost_client as lc

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "protocol.md")


def spec_frames():
    """Every example frame of the spec: (label, packet name, bytes), in document order."""
    with open(SPEC, encoding="utf-8") as f:
        text = f.read()
    out = []
    pattern = re.compile(r"^(Example (\w+):|((?:Held )?[Ss]tep) (H?\d+), [^:\n]*: (\w+) [^\n]*)\n\n```hex\n(.*?)```", re.M | re.S)
    for m in pattern.finditer(text):
        name = m.group(2) or m.group(5)
        label = m.group(1).split(":")[0] if m.group(2) else f"{m.group(3)} {m.group(4)}"
        out.append((label, name, bytes.fromhex(m.group(6))))
    return out


def step(n):
    for label, name, raw in spec_frames():
        if label == f"Step {n}":
            return name, raw
    raise KeyError(n)


def decode(raw):
    (length,) = struct.unpack_from(">I", raw)
    assert length == len(raw) - 4, "length prefix"
    return lc.decode_frame_body(raw[4], raw[5:])


class XXH64Test(unittest.TestCase):
    # Published xxHash test vectors (seed 0).
    VECTORS = [
        (b"", 0xEF46DB3751D8E999),
        (b"a", 0xD24EC4F1A98C6E5B),
        (b"abc", 0x44BC2CF5AD770999),
        (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1),
    ]

    def test_vectors(self):
        for data, want in self.VECTORS:
            with self.subTest(data=data):
                self.assertEqual(lc.xxh64(data), want)

    def test_streaming_matches_one_shot(self):
        data = bytes((i * 7 + 3) & 0xFF for i in range(1000))
        want = lc.xxh64(data)
        for split in (1, 3, 31, 32, 33, 64, 999):
            h = lc.XXH64()
            for i in range(0, len(data), split):
                h.update(data[i:i + split])
            self.assertEqual(h.intdigest(), want, f"split {split}")

    def test_spec_database_hash(self):
        # Section 7.3: the example database's hash over its two defs (7.1's encoding).
        def s(x):
            b = x.encode()
            return bytes([len(b)]) + b
        data = s("ThingDef") + bytes([2])
        data += s("Apple") + (0x0123456789ABCDEF).to_bytes(8, "little")
        data += s("Bread") + (0xFEDCBA9876543210).to_bytes(8, "little")
        self.assertEqual(lc.xxh64(data), 0x6940960334109FA7)


class GoldenFrameTest(unittest.TestCase):
    def test_every_example_frame_round_trips(self):
        frames = spec_frames()
        self.assertGreaterEqual(len(frames), 26 + 18 + 7)  # one example per packet, 18 steps, 7 held steps
        names = {n for _, n, _ in frames}
        self.assertEqual(names, set(lc.IDS), "every packet has an example")
        for label, name, raw in frames:
            with self.subTest(label=label, packet=name):
                got_name, fields = decode(raw)
                self.assertEqual(got_name, name)
                fixed = name == "Server_WorldData" and label.startswith("Step")
                self.assertEqual(lc.encode_frame(name, fields, host_world_data=fixed).hex(" "), raw.hex(" "))


class HeldRejoinTest(unittest.TestCase):
    """Section 6.6's worked example, read with the client's own tables."""

    def held(self, n):
        for label, name, raw in spec_frames():
            if label == f"Held step H{n}":
                return decode(raw)
        raise KeyError(n)

    def test_the_claim_and_the_answers(self):
        name, user = self.held(1)
        self.assertEqual(name, "Client_Username")
        self.assertEqual((user["held"]["tick"], user["held"]["applied"]), (700, 1))
        self.assertEqual([(c["tick"], c["world"]) for c in user["held"]["checks"]],
                         [(600, 0x1111111111111111), (660, 0x5555555555555555)])
        _, ok = self.held(2)
        self.assertEqual((ok["rejoin"], ok["granted"], ok["why"], ok["replayCodec"]), (1, 720, "", 0))
        # The replay is a gzip member of the column layout the spec quotes:
        # speed 1, two commands, ticks 700 and 700 + 10.
        with open(SPEC, encoding="utf-8") as f:
            m = re.search(r"^The replay of step H2, inflated:\n\n```hex\n(.*?)```", f.read(), re.M | re.S)
        inside = bytes.fromhex(m.group(1))
        self.assertEqual(gzip.decompress(ok["replay"]), inside)
        self.assertEqual(inside[:5], bytes([1, 2, 0xBC, 0x05, 0x0A]))
        _, grant = self.held(5)
        self.assertEqual((grant["tick"], grant["granted"], grant["commands"]), (720, 720, []))
        _, no = self.held(7)
        self.assertEqual((no["rejoin"], no["granted"]), (2, 0))
        self.assertTrue(no["why"])

    def test_a_session_without_the_keys_reads_as_before(self):
        _, s = decode(step(8)[1])
        self.assertEqual((s["rejoin"], s["granted"], s["why"]), (0, 0, ""))
        # and this client's own username leaves the key out, as before
        raw = lc.encode_frame("Client_Username", {"name": "ann", "token": b"\xc4" * 16})
        self.assertNotIn(b"\xa1h", raw)


class WorkedHandshakeTest(unittest.TestCase):
    """Section 15's values, re-derived by the client's own code."""

    def test_password_proof(self):
        _, ml = decode(step(2)[1])
        _, user = decode(step(7)[1])
        self.assertEqual(lc.password_proof("swordfish", ml["passwordChallenge"]), user["passwordProof"])

    def test_defs_echo_the_mod_list(self):
        _, ml = decode(step(2)[1])
        self.assertEqual(lc.encode_frame("Client_Defs", {"databases": ml["databases"]}), step(3)[1])

    def test_payload_verifies(self):
        chunks = [decode(step(n)[1])[1] for n in (12, 14, 16)]
        v = lc.PayloadVerifier(chunks[0]["total"])
        acks = []
        for c in chunks:
            v.feed(c["data"])
            acks.append(v.pos)
        v.done()
        self.assertEqual(acks, [decode(step(n)[1])[1]["received"] for n in (13, 15, 17)])
        self.assertEqual(v.verified, [(0, 33, 8), (1, 65, 40)])
        self.assertEqual(v.hdr_hash, 0xB4E7F3DC1C574CAD)
        ready = lc.encode_frame("Client_WorldReady", {"tick": v.header["tick"], "worldHash": v.header["worldHash"]})
        self.assertEqual(ready, step(18)[1])

    def payload(self):
        return b"".join(decode(step(n)[1])[1]["data"] for n in (12, 14, 16))

    def test_payload_refusals(self):
        good = self.payload()
        cases = {
            "a blob byte changed": (good[:150] + bytes([good[150] ^ 1]) + good[151:], "does not inflate|XXH64"),
            "the last blob byte changed": (good[:-1] + bytes([good[-1] ^ 1]), "does not inflate|XXH64"),
            "a header byte changed": (good[:30] + bytes([good[30] ^ 1]) + good[31:], "header's hash"),
            "hdrLen over 64 MiB": (struct.pack(">I", (64 << 20) + 1) + good[4:], "64 MiB"),
            "one byte short": (good[:-1], "blobs' sizes"),
            "one byte more": (good + b"\0", "blobs' sizes"),
        }
        for what, (data, want) in cases.items():
            with self.subTest(what):
                with self.assertRaisesRegex(lc.PayloadError, want):
                    v = lc.PayloadVerifier(len(data))
                    v.feed(data)
                    v.done()

    def test_inflated_size_is_bounded(self):
        good = bytearray(self.payload())
        # Claim the map blob inflates to 39 bytes instead of 40: the header
        # changes, so re-hash it to reach the inflate check.
        hdr_len = struct.unpack_from(">I", good)[0]
        header = bytes(good[12:12 + hdr_len]).replace(b"\xa1\x72\x28", b"\xa1\x72\x27")
        good[4:12] = struct.pack(">Q", lc.xxh64(header))
        good[12:12 + hdr_len] = header
        v = lc.PayloadVerifier(len(good))
        with self.assertRaisesRegex(lc.PayloadError, "inflates past its raw size of 39"):
            v.feed(bytes(good))


class DecoderTest(unittest.TestCase):
    def test_refusals(self):
        cases = {
            "trailing bytes": (6, b"\x81\xa1\x72\x01\x00", "does not decode"),
            "a float": (6, b"\x81\xa1\x72\xcb" + struct.pack(">d", 1.0), "float"),
            "a bool for an int": (6, b"\x81\xa1\x72\xc3", "want an integer"),
            "negative uint": (6, b"\x81\xa1\x72\xff", "does not fit"),
            "uint8 overflow": (19, b"\x81\xa1\x61\xcd\x01\x00", "does not fit uint8"),
            "chat over 256 bytes": (28, b"\x81\xa1\x74\xda\x01\x01" + b"x" * 257, "257 bytes, allowed 0 to 256"),
            "a str longer than its frame": (28, b"\x81\xa1\x74\xdb\x7f\xff\xff\xff" + b"x" * 8, "does not decode"),
            "token of 15 bytes": (25, b"\x81\xa1\x6b\xc4\x0f" + b"\0" * 15, "exactly 16"),
            "unknown packet": (33, b"\x80", "unknown packet ID"),
        }
        for what, (pid, body, want) in cases.items():
            with self.subTest(what):
                with self.assertRaisesRegex(lc.ProtocolError, want):
                    lc.decode_frame_body(pid, body)

    def test_absent_nil_and_unknown_keys(self):
        name, p = lc.decode_frame_body(28, b"\x82\xa1\x6e\xc0\xa1\x7a\x05")
        self.assertEqual((name, p), ("Server_Chat", {"name": "", "playerID": 0, "text": ""}))

    def test_frame_limit_checked_before_the_body(self):
        a, b = socket.socketpair()
        try:
            a.sendall(struct.pack(">I", lc.DEFAULT_MAX_FRAME + 1))  # no body follows
            with self.assertRaisesRegex(lc.ProtocolError, "over the 1048576-byte limit"):
                lc.Connection(b).recv(5)
            a.sendall(struct.pack(">I", 0))
            with self.assertRaisesRegex(lc.ProtocolError, "length 0"):
                lc.Connection(b).recv(5)
        finally:
            a.close()
            b.close()


class ReplayTest(unittest.TestCase):
    """The client against a loopback host that replays section 15 byte for byte."""

    def test_client_side_of_the_worked_handshake(self):
        frames = {n: step(n)[1] for n in range(1, 19)}
        srv = socket.create_server(("127.0.0.1", 0))
        port = srv.getsockname()[1]
        got = []
        errors = []

        def host():
            try:
                conn, _ = srv.accept()
                c = lc.Connection(conn)

                def want(n):
                    frame = c.recv(10)
                    got.append(frame)
                    if frame is None:
                        raise AssertionError(f"step {n}: nothing")
                    name, p = frame
                    exp_name, exp = decode(frames[n])
                    if name == "Client_Clock":
                        p["clientTime"] = exp["clientTime"]  # the one value a real client makes up
                    if (name, p) != (exp_name, exp):
                        raise AssertionError(f"step {n}: got {name} {p}, want {exp_name} {exp}")
                    if name != "Client_Clock" and lc.encode_frame(name, p) != frames[n]:
                        raise AssertionError(f"step {n}: bytes differ")

                want(1)
                conn.sendall(frames[2])
                want(3)
                conn.sendall(frames[4])
                want(5)
                for n in range(6, 7):
                    conn.sendall(frames[n])
                want(7)
                for n in range(8, 13):
                    conn.sendall(frames[n])
                want(13)
                conn.sendall(frames[14])
                want(15)
                conn.sendall(frames[16])
                want(17)
                want(18)
                name, p = c.recv(10)  # a player reports the grant, 0 here
                if (name, p) != ("Client_TickAck", {"tick": 0}):
                    raise AssertionError(f"after WorldReady: {name} {p}")
                name, p = c.recv(10)
                if name != "Client_Leave":
                    raise AssertionError(f"want Client_Leave, got {name}")
                conn.close()
            except Exception as e:  # reported to the test below
                errors.append(e)

        t = threading.Thread(target=host)
        t.start()
        args = lc.parse_args([f"127.0.0.1:{port}", "--name", "ann", "--password", "swordfish", "--stay", "0"])
        out = open(os.devnull, "w")
        try:
            lc.Client(args, out=out).run()
        finally:
            out.close()
            t.join(10)
            srv.close()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main()
