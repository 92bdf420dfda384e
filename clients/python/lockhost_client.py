#!/usr/bin/python3
"""A lockhost client written from docs/protocol.md alone.

It joins a lockhost session over TCP, downloads the world and verifies it
(everything section 8.3 lets a client that does not run the game check),
sends Client_WorldReady as section 11 prescribes, stays a while answering
clock rounds and keepalives (and, as a player, reporting ticks), optionally
chats one line, and leaves with Client_Leave.

Section numbers in comments refer to docs/protocol.md.
"""

import argparse
import hashlib
import hmac
import json
import socket
import struct
import sys
import time
import zlib

import msgpack

PROTOCOL_VERSION = 4  # section 0 / the document's header
DEFAULT_PORT = 30502  # section 2

# Section 3, the limits a client applies.
DEFAULT_MAX_FRAME = 1 << 20
MAX_CHUNK_DATA = 256 << 10
CONTENT_HASH_SIZE = 32  # section 17.4: a SHA-256
MAX_COMMAND_PAYLOAD = 64 << 10
MAX_CLIENT_COMMAND_PAYLOAD = 256 << 10
MAX_DETAIL_BYTES = 512 << 10
MAX_DATABASES = 512
MAX_TYPE_NAME_BYTES = 128
MAX_NAME_BYTES = 64
MAX_PROOF_BYTES = 64
TOKEN_SIZE = 16
MAX_RESUME_BLOBS = 4097
MAX_HELD_CHECKS = 16
MAX_REPLAY_BYTES = 768 << 10
MAX_HASH_MAPS = 4096
MAX_MAP_PARTS = 16
MAX_LEAVE_WHY_BYTES = 64
MAX_CHAT_BYTES = 256
MAX_MODS = 4096
MAX_MOD_ID_BYTES = 256
MAX_GAME_STRING_BYTES = 64
MAX_PLAYERS = 1024
MAX_TICK_COMMANDS = 4096
MAX_TEXT_BYTES = 4096
MAX_HEADER = 64 << 20
MAX_HEADER_MAPS = 4096
MAX_MANIFEST_SIZE = 64 << 20
# The reference client's payload limit (section 4, id 18).
DEFAULT_MAX_WORLD = 2 << 30
# Section 6.5: a client that hears nothing for 30 s gives up.
SILENCE_LIMIT = 30.0

PASSWORD_DOMAIN = b"lockhost session password v1\x00"  # section 6.3
ARBITER_DOMAIN = b"lockhost arbiter secret v1\x00"  # section 14.2
DEFAULT_UPLOAD_LIMIT = 1 << 30  # section 3
MAX_EXPLAIN_TICKS = 1024  # section 3
MAX_EXPLAIN_MAPS = 16
MAX_EXPLAIN_CHUNK = 64 << 10

# ---------------------------------------------------------------- XXH64

_P1 = 11400714785074694791
_P2 = 14029467366897019727
_P3 = 1609587929392839161
_P4 = 9650029242287828579
_P5 = 2870177450012600261
_M = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc, lane):
    acc = (acc + lane * _P2) & _M
    return (_rotl(acc, 31) * _P1) & _M


def _merge(h, v):
    h ^= _round(0, v)
    return (h * _P1 + _P4) & _M


class XXH64:
    """Streaming XXH64 (the public xxHash algorithm), 64-bit, seed 0 by default."""

    def __init__(self, seed=0):
        self.seed = seed & _M
        self.v = [
            (self.seed + _P1 + _P2) & _M,
            (self.seed + _P2) & _M,
            self.seed,
            (self.seed - _P1) & _M,
        ]
        self.buf = b""
        self.total = 0

    def update(self, data):
        data = bytes(data)
        self.total += len(data)
        if self.buf:
            need = 32 - len(self.buf)
            self.buf += data[:need]
            data = data[need:]
            if len(self.buf) < 32:
                return
            self._stripes(self.buf)
            self.buf = b""
        n = len(data) - len(data) % 32
        if n:
            self._stripes(data[:n])
        self.buf = data[n:]

    def _stripes(self, data):
        v1, v2, v3, v4 = self.v
        for a, b, c, d in struct.iter_unpack("<4Q", data):
            v1 = (_rotl((v1 + a * _P2) & _M, 31) * _P1) & _M
            v2 = (_rotl((v2 + b * _P2) & _M, 31) * _P1) & _M
            v3 = (_rotl((v3 + c * _P2) & _M, 31) * _P1) & _M
            v4 = (_rotl((v4 + d * _P2) & _M, 31) * _P1) & _M
        self.v = [v1, v2, v3, v4]

    def intdigest(self):
        if self.total >= 32:
            v1, v2, v3, v4 = self.v
            h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
            for v in self.v:
                h = _merge(h, v)
        else:
            h = (self.seed + _P5) & _M
        h = (h + self.total) & _M
        rest, i = self.buf, 0
        while i + 8 <= len(rest):
            (lane,) = struct.unpack_from("<Q", rest, i)
            h ^= _round(0, lane)
            h = (_rotl(h, 27) * _P1 + _P4) & _M
            i += 8
        if i + 4 <= len(rest):
            (lane,) = struct.unpack_from("<I", rest, i)
            h ^= (lane * _P1) & _M
            h = (_rotl(h, 23) * _P2 + _P3) & _M
            i += 4
        while i < len(rest):
            h ^= (rest[i] * _P5) & _M
            h = (_rotl(h, 11) * _P1) & _M
            i += 1
        h ^= h >> 33
        h = (h * _P2) & _M
        h ^= h >> 29
        h = (h * _P3) & _M
        h ^= h >> 32
        return h


def xxh64(data, seed=0):
    """XXH64 of data, as an int."""
    x = XXH64(seed)
    x.update(data)
    return x.intdigest()


# ---------------------------------------------------------------- schemas
#
# A type is one of: ("u", bits), ("i", bits), ("bool",), ("str", max, min),
# ("bin", max, exact), ("arr", item, max), ("map", {key: (field, type)}).
# Decoded packets are dicts keyed by field name.


class ProtocolError(Exception):
    """A packet that breaks section 1-4's rules: the connection must end."""


def U(bits):
    return ("u", bits)


def I(bits):
    return ("i", bits)


BOOL = ("bool",)


def STR(mx, mn=0):
    return ("str", mx, mn)


def BIN(mx, exact=None):
    return ("bin", mx, exact)


def ARR(item, mx):
    return ("arr", item, mx)


def MAP(**fields):
    # fields: key=(field name, type)
    return ("map", fields)


def OPT(t):
    """A key left out when its value is the zero value (section 1's twelve keys, relay mode's and the held world's among them)."""
    return ("opt", t)


DATABASE = MAP(t=("type", STR(MAX_TYPE_NAME_BYTES, 1)), c=("count", I(32)), h=("hash", U(64)))
TICK_COMMAND = MAP(
    t=("tick", U(64)), q=("seq", U(32)), m=("mapID", I(32)), k=("kind", U(16)),
    p=("player", I(32)), d=("payload", BIN(MAX_COMMAND_PAYLOAD)),
)

# Section 4: id -> (name, body type).
PACKETS = {
    0: ("Client_Protocol", MAP(v=("protocol", U(32)))),
    1: ("Client_Defs", MAP(d=("databases", ARR(DATABASE, MAX_DATABASES)))),
    2: ("Client_Username", MAP(
        n=("name", STR(MAX_NAME_BYTES)), p=("passwordProof", BIN(MAX_PROOF_BYTES)),
        s=("spectate", BOOL), k=("token", BIN(TOKEN_SIZE)),
        r=("resume", ARR(MAP(i=("index", U(32)), h=("hash", U(64))), MAX_RESUME_BLOBS)),
        a=("arbiterProof", OPT(BIN(MAX_PROOF_BYTES))),
        # Section 6.6: a rejoin from the world held; this client simulates
        # nothing, so it never sends one (all zero: left out).
        h=("held", OPT(MAP(t=("tick", U(64)), a=("applied", U(32)),
                           c=("checks", ARR(MAP(t=("tick", U(64)), w=("world", U(64))), MAX_HELD_CHECKS))))))),
    3: ("Client_WorldReady", MAP(t=("tick", U(64)), h=("worldHash", U(64)))),
    4: ("Client_Command", MAP(m=("mapID", I(32)), k=("kind", U(16)),
                              d=("payload", BIN(MAX_CLIENT_COMMAND_PAYLOAD)))),
    5: ("Client_Clock", MAP(n=("nonce", U(32)), c=("clientTime", I(64)))),
    6: ("Client_Ack", MAP(r=("received", U(64)))),
    7: ("Client_TickAck", MAP(t=("tick", U(64)))),
    8: ("Client_Keepalive", MAP(q=("seq", U(32)), h=("hostTime", I(64)))),
    9: ("Client_Hashes", MAP(
        t=("tick", U(64)), w=("world", U(64)),
        m=("maps", ARR(MAP(m=("mapID", I(32)), h=("hash", U(64)),
                           p=("parts", ARR(U(64), MAX_MAP_PARTS))), MAX_HASH_MAPS)))),
    10: ("Client_Resynced", MAP(t=("tick", U(64)), w=("world", U(64)))),
    11: ("Client_Leave", MAP(w=("why", STR(MAX_LEAVE_WHY_BYTES)))),
    12: ("Client_Chat", MAP(t=("text", STR(MAX_CHAT_BYTES)))),
    13: ("Client_Upload", MAP(q=("request", U(32)), o=("offset", U(64)), t=("total", U(64)),
                              d=("data", BIN(MAX_CHUNK_DATA)))),
    # Section 17.4: content sync over the session connection.
    14: ("Client_ContentGet", MAP(h=("hash", BIN(CONTENT_HASH_SIZE)), o=("offset", U(64)))),
    # Section 10.1: explaining a desync.
    15: ("Client_ExplainReply", MAP(q=("request", U(32)), o=("offset", U(64)), t=("total", U(64)),
                                    d=("data", BIN(MAX_EXPLAIN_CHUNK)), e=("error", STR(MAX_TEXT_BYTES)))),
    16: ("Server_ModList", MAP(
        v=("gameVersion", STR(MAX_GAME_STRING_BYTES)), m=("mods", ARR(STR(MAX_MOD_ID_BYTES), MAX_MODS)),
        c=("passwordChallenge", BIN(MAX_PROOF_BYTES)), d=("databases", ARR(DATABASE, MAX_DATABASES)),
        a=("arbiterChallenge", OPT(BIN(MAX_PROOF_BYTES))),
        s=("contentHash", OPT(BIN(CONTENT_HASH_SIZE))), l=("contentSize", OPT(U(32))))),
    17: ("Server_DefsOK", MAP(g=("gameName", STR(MAX_GAME_STRING_BYTES)), p=("playerID", I(32)))),
    18: ("Server_WorldData", MAP(o=("offset", U(64)), t=("total", U(64)), d=("data", BIN(MAX_CHUNK_DATA)))),
    19: ("Server_PlayerList", MAP(
        a=("action", U(8)),
        p=("players", ARR(MAP(i=("id", I(32)), n=("name", STR(MAX_NAME_BYTES)), f=("faction", I(32)),
                              s=("status", U(8)), x=("spectator", BOOL), l=("latencyMs", I(32))),
                          MAX_PLAYERS)))),
    20: ("Server_Disconnect", MAP(
        r=("reason", U(8)), m=("message", STR(MAX_TEXT_BYTES)),
        s=("defStatuses", BIN(MAX_DATABASES)), d=("detail", BIN(MAX_DETAIL_BYTES)))),
    21: ("Server_Notice", MAP(k=("kind", U(8)), t=("text", STR(MAX_TEXT_BYTES)))),
    22: ("Server_Tick", MAP(t=("tick", U(64)), c=("commands", ARR(TICK_COMMAND, MAX_TICK_COMMANDS)),
                          g=("granted", U(64)), s=("speed", U(8)))),
    23: ("Server_Clock", MAP(n=("nonce", U(32)), h=("hostTime", I(64)), d=("delta", I(64)), a=("attempt", U(8)))),
    24: ("Server_Keepalive", MAP(q=("seq", U(32)), h=("hostTime", I(64)))),
    25: ("Server_Session", MAP(k=("token", BIN(TOKEN_SIZE, TOKEN_SIZE)), g=("graceMs", I(64)),
                             p=("playerID", I(32)), e=("hashEvery", U(32)),
                             # Section 6.6: the answer to a held world (5.9), left out when none was named.
                             r=("rejoin", OPT(U(8))), t=("granted", OPT(U(64))),
                             c=("replay", OPT(BIN(MAX_REPLAY_BYTES))), z=("replayCodec", OPT(U(8))),
                             m=("why", OPT(STR(MAX_TEXT_BYTES))))),
    26: ("Server_Resync", MAP(t=("tick", U(64)), a=("applied", U(32)),
                            m=("maps", ARR(I(32), MAX_HASH_MAPS)), f=("full", BOOL))),
    27: ("Server_Desync", MAP(s=("state", U(8)), p=("playerID", I(32)), n=("name", STR(MAX_NAME_BYTES)),
                            t=("tick", U(64)), m=("maps", ARR(I(32), MAX_HASH_MAPS)), w=("world", BOOL),
                            r=("repairMs", I(64)))),
    28: ("Server_Chat", MAP(n=("name", STR(MAX_NAME_BYTES)), p=("playerID", I(32)), t=("text", STR(MAX_CHAT_BYTES)))),
    29: ("Server_UploadRequest", MAP(q=("request", U(32)), k=("kind", U(8)), t=("tick", U(64)),
                                     a=("applied", U(32)), m=("maps", ARR(I(32), MAX_HASH_MAPS)),
                                     l=("limit", U(64)))),
    30: ("Server_UploadResult", MAP(q=("request", U(32)), r=("result", U(8)), m=("message", STR(MAX_TEXT_BYTES)))),
    31: ("Server_Content", MAP(h=("hash", BIN(CONTENT_HASH_SIZE)), o=("offset", U(64)), t=("total", U(64)),
                               n=("length", U(32)), z=("coding", U(8)), d=("data", BIN(MAX_CHUNK_DATA)))),
    32: ("Server_ExplainRequest", MAP(q=("request", U(32)), f=("from", U(64)), t=("to", U(64)),
                                      m=("maps", ARR(I(32), MAX_EXPLAIN_MAPS)),
                                      h=("hashes", ARR(U(64), MAX_EXPLAIN_TICKS * (1 + MAX_EXPLAIN_MAPS))),
                                      l=("limit", U(64)))),
}
IDS = {name: pid for pid, (name, _) in PACKETS.items()}

# Section 8.2: the world payload's header, its arrays bounded as section 3
# says (the commands only by the header's size).
BLOB = MAP(s=("size", U(64)), r=("rawSize", U(64)), h=("hash", U(64)), z=("codec", OPT(U(8))))
HEADER = MAP(
    f=("faction", I(32)), t=("tick", U(64)), g=("granted", U(64)), h=("worldHash", U(64)),
    w=("world", BLOB),
    m=("maps", ARR(MAP(i=("id", I(32)), b=("blob", BLOB), x=("stateHash", U(64))), MAX_HEADER_MAPS)),
    c=("commands", ARR(MAP(m=("mapID", I(32)), c=("commands", ARR(TICK_COMMAND, MAX_HEADER))), MAX_HEADER)),
    k=("held", ARR(U(32), MAX_RESUME_BLOBS)),
)


def _zero(t):
    kind = t[0]
    if kind == "opt":
        return _zero(t[1])
    if kind in ("u", "i"):
        return 0
    if kind == "bool":
        return False
    if kind == "str":
        return ""
    if kind == "bin":
        return b""
    if kind == "arr":
        return []
    return {field: _zero(ft) for _, (field, ft) in t[1].items()}


def _limits(t, acc):
    """The largest str, bin, array and map lengths a type allows, for the unpacker."""
    kind = t[0]
    if kind == "opt":
        return _limits(t[1], acc)
    if kind == "str":
        acc["str"] = max(acc["str"], t[1])
    elif kind == "bin":
        acc["bin"] = max(acc["bin"], t[1])
    elif kind == "arr":
        acc["arr"] = max(acc["arr"], t[2])
        _limits(t[1], acc)
    elif kind == "map":
        for _, (_, ft) in t[1].items():
            _limits(ft, acc)
    return acc


def _check(t, v, where):
    kind = t[0]
    if kind == "opt":
        return _check(t[1], v, where)
    if kind in ("u", "i"):
        if type(v) is not int:
            raise ProtocolError(f"{where}: want an integer, got {type(v).__name__}")
        lo, hi = (0, 1 << t[1]) if kind == "u" else (-(1 << (t[1] - 1)), 1 << (t[1] - 1))
        if not lo <= v < hi:
            raise ProtocolError(f"{where}: {v} does not fit {'uint' if kind == 'u' else 'int'}{t[1]}")
        return v
    if kind == "bool":
        if type(v) is not bool:
            raise ProtocolError(f"{where}: want a bool, got {type(v).__name__}")
        return v
    if kind == "str":
        if v is None:
            v = ""
        if isinstance(v, bytes):  # section 1: bin accepted for str
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError(f"{where}: not UTF-8") from None
        if not isinstance(v, str):
            raise ProtocolError(f"{where}: want a str, got {type(v).__name__}")
        n = len(v.encode("utf-8"))
        if n > t[1] or n < t[2]:
            raise ProtocolError(f"{where}: {n} bytes, allowed {t[2]} to {t[1]}")
        return v
    if kind == "bin":
        if v is None:
            v = b""
        if isinstance(v, str):  # section 1: str accepted for bin
            v = v.encode("utf-8")
        if not isinstance(v, bytes):
            raise ProtocolError(f"{where}: want bin, got {type(v).__name__}")
        if len(v) > t[1]:
            raise ProtocolError(f"{where}: {len(v)} bytes, at most {t[1]}")
        if t[2] is not None and len(v) != t[2]:
            raise ProtocolError(f"{where}: {len(v)} bytes, want exactly {t[2]}")
        return v
    if kind == "arr":
        if v is None:
            return []
        if not isinstance(v, list):
            raise ProtocolError(f"{where}: want an array, got {type(v).__name__}")
        if len(v) > t[2]:
            raise ProtocolError(f"{where}: {len(v)} items, at most {t[2]}")
        return [_check(t[1], item, f"{where}[{i}]") for i, item in enumerate(v)]
    # map
    if not isinstance(v, dict):
        raise ProtocolError(f"{where}: want a map, got {type(v).__name__}")
    out = {}
    for key, (field, ft) in t[1].items():
        out[field] = _check(ft, v[key], f"{where}.{key}") if key in v else _zero(ft)
    return out  # unknown keys are ignored (section 1)


def decode_body(t, body, where):
    """Decode one msgpack map of type t, checking every key's type and limit.

    The unpacker refuses any str, bin, array or map longer than the schema
    allows before it allocates it; trailing bytes are an error (section 1).
    """
    # A floor leaves room for unknown keys (ignored, section 1); the body's
    # own length bounds everything anyway.
    lim = _limits(t, {"str": 4096, "bin": 4096, "arr": 4096})
    try:
        v = msgpack.unpackb(
            body, raw=False, strict_map_key=True, use_list=True,
            max_str_len=min(lim["str"], len(body)), max_bin_len=min(lim["bin"], len(body)),
            max_array_len=min(lim["arr"], len(body)), max_map_len=min(4096, len(body)), max_ext_len=0,
        )
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, UnicodeDecodeError) as e:
        raise ProtocolError(f"{where}: does not decode ({e})") from None
    if isinstance(v, float):
        raise ProtocolError(f"{where}: a float")
    _no_floats(v, where)
    return _check(t, v, where)


def _no_floats(v, where):
    if isinstance(v, float):
        raise ProtocolError(f"{where}: a float where none is allowed")
    if isinstance(v, list):
        for item in v:
            _no_floats(item, where)
    elif isinstance(v, dict):
        for item in v.values():
            _no_floats(item, where)


def decode_frame_body(pid, body):
    if pid not in PACKETS:
        raise ProtocolError(f"unknown packet ID {pid}")
    name, t = PACKETS[pid]
    return name, decode_body(t, body, name)


# ---------------------------------------------------------------- encoder
#
# The host's canonical form (section 1): keys sorted, every key written,
# integers shortest (signed types in msgpack's signed family, as the
# examples show), empty bin and array as nil, empty str as a0.


def _enc_uint(v):
    if v < 0x80:
        return bytes([v])
    if v < 0x100:
        return b"\xcc" + bytes([v])
    if v < 0x10000:
        return b"\xcd" + struct.pack(">H", v)
    if v < 0x100000000:
        return b"\xce" + struct.pack(">I", v)
    return b"\xcf" + struct.pack(">Q", v)


def _enc_int(v):
    if -32 <= v < 0x80:
        return struct.pack(">b", v) if v < 0 else bytes([v])
    if -0x80 <= v < 0x80:
        return b"\xd0" + struct.pack(">b", v)
    if -0x8000 <= v < 0x8000:
        return b"\xd1" + struct.pack(">h", v)
    if -0x80000000 <= v < 0x80000000:
        return b"\xd2" + struct.pack(">i", v)
    return b"\xd3" + struct.pack(">q", v)


def _enc_len(n, fix, fixmax, c8, c16, c32):
    if fix is not None and n < fixmax:
        return bytes([fix | n])
    if c8 is not None and n < 0x100:
        return bytes([c8, n])
    if n < 0x10000:
        return bytes([c16]) + struct.pack(">H", n)
    return bytes([c32]) + struct.pack(">I", n)


def encode_value(t, v):
    kind = t[0]
    if kind == "opt":
        return encode_value(t[1], v)
    if kind == "u":
        return _enc_uint(v)
    if kind == "i":
        return _enc_int(v)
    if kind == "bool":
        return b"\xc3" if v else b"\xc2"
    if kind == "str":
        b = v.encode("utf-8")
        return _enc_len(len(b), 0xA0, 32, 0xD9, 0xDA, 0xDB) + b
    if kind == "bin":
        if not v:
            return b"\xc0"
        return _enc_len(len(v), None, 0, 0xC4, 0xC5, 0xC6) + bytes(v)
    if kind == "arr":
        if not v:
            return b"\xc0"
        return _enc_len(len(v), 0x90, 16, None, 0xDC, 0xDD) + b"".join(encode_value(t[1], x) for x in v)
    out = []
    for key in sorted(t[1]):
        field, ft = t[1][key]
        value = v.get(field, _zero(ft))
        if ft[0] == "opt" and value == _zero(ft):
            continue  # left out at its zero value (section 1)
        out.append(encode_value(STR(1), key))
        out.append(encode_value(ft, value))
    return _enc_len(len(out) // 2, 0x80, 16, None, 0xDE, 0xDF) + b"".join(out)


def encode_frame(name, fields, host_world_data=False):
    """One frame: uint32 BE length, packet ID, msgpack body (section 2).

    host_world_data writes Server_WorldData in the host's fixed-width form
    (section 4, id 18): o and t as cf + 8 bytes, d as c6 + 4-byte length.
    """
    pid = IDS[name]
    if host_world_data:
        d = bytes(fields.get("data", b""))
        body = (b"\x83\xa1o\xcf" + struct.pack(">Q", fields["offset"]) + b"\xa1t\xcf"
                + struct.pack(">Q", fields["total"]) + b"\xa1d\xc6" + struct.pack(">I", len(d)) + d)
    else:
        body = encode_value(PACKETS[pid][1], fields)
    return struct.pack(">IB", len(body) + 1, pid) + body


# ---------------------------------------------------------------- the world payload


class PayloadError(Exception):
    """The world payload fails a check of section 8.3."""


class PayloadVerifier:
    """Checks a world payload as it streams in (sections 8.1 to 8.3).

    It keeps only the header: every blob is hashed and inflated on the fly,
    its inflated size bounded by the header's r.
    """

    def __init__(self, total, keep=False):
        if total < 12:
            raise PayloadError(f"the payload's total of {total} bytes is too short for its prefix")
        self.total = total
        self.pos = 0
        self.pending = b""  # prefix and header bytes not yet complete
        self.hdr_len = None
        self.hdr_hash = None
        self.header = None
        self.blobs = []  # (index, blob dict) still expected, in order
        self.cur = None  # (index, blob, remaining, XXH64, decompressobj, raw count)
        self.verified = []  # (index, size, rawSize)
        self.raw_total = 0
        self.keep = keep
        self.kept = {}  # index -> inflated bytes, when keep

    def feed(self, data):
        data = memoryview(data)
        self.pos += len(data)
        if self.pos > self.total:
            raise PayloadError("the payload runs past its total")
        while len(data):
            if self.header is None:
                data = self._feed_header(data)
                continue
            if self.cur is None:
                if not self.blobs:
                    raise PayloadError("bytes after the last blob")
                index, blob = self.blobs.pop(0)
                if blob["codec"] != 0:
                    # Section 8.1: only a codec the client listed is sent; this one lists none but gzip.
                    raise PayloadError(f"blob {index} has codec {blob['codec']}, and this client reads only gzip (0)")
                self.cur = [index, blob, blob["size"], XXH64(), zlib.decompressobj(16 + zlib.MAX_WBITS), 0]
                if self.keep:
                    self.kept[index] = bytearray()
            n = min(len(data), self.cur[2])
            self._blob_bytes(data[:n])
            data = data[n:]
            self.cur[2] -= n
            if self.cur[2] == 0:
                self._finish_blob()
        if self.header is not None and self.cur is None and self.blobs and self.blobs[0][1]["size"] == 0:
            raise PayloadError(f"blob {self.blobs[0][0]} is empty, which is no gzip stream")

    def _feed_header(self, data):
        if self.hdr_len is None:
            need = 12 - len(self.pending)
            self.pending += bytes(data[:need])
            data = data[need:]
            if len(self.pending) < 12:
                return data
            self.hdr_len, self.hdr_hash = struct.unpack(">IQ", self.pending)
            self.pending = b""
            if self.hdr_len > MAX_HEADER:
                raise PayloadError(f"the header's length {self.hdr_len} is over the 64 MiB limit")
            if 12 + self.hdr_len > self.total:
                raise PayloadError(f"the header's length {self.hdr_len} runs past the payload's total")
        need = self.hdr_len - len(self.pending)
        self.pending += bytes(data[:need])
        data = data[need:]
        if len(self.pending) < self.hdr_len:
            return data
        raw, self.pending = self.pending, b""
        got = xxh64(raw)
        if got != self.hdr_hash:
            raise PayloadError(f"the header's hash is {got:016x}, the prefix says {self.hdr_hash:016x}")
        try:
            self.header = decode_body(HEADER, raw, "world header")
        except ProtocolError as e:
            raise PayloadError(str(e)) from None
        h = self.header
        if h["granted"] < h["tick"]:
            raise PayloadError(f"the header's grant {h['granted']} is below its tick {h['tick']}")
        ids = [m["id"] for m in h["maps"]]
        if len(set(ids)) != len(ids):
            raise PayloadError("the header lists a map twice")
        scopes = [mc["mapID"] for mc in h["commands"]]
        if len(set(scopes)) != len(scopes):
            raise PayloadError("the header lists a map's commands twice")
        count = 1 + len(h["maps"])
        held = h["held"]
        for i, idx in enumerate(held):
            if idx >= count or (i and idx <= held[i - 1]):
                raise PayloadError(f"the header's held list {held} is not ascending blob indexes below {count}")
        all_blobs = [(0, h["world"])] + [(1 + i, m["blob"]) for i, m in enumerate(h["maps"])]
        self.blobs = [(i, b) for i, b in all_blobs if i not in set(held)]
        size = sum(b["size"] for _, b in self.blobs)
        if 12 + self.hdr_len + size != self.total:
            raise PayloadError(
                f"the blobs' sizes add up to {size} bytes, but the payload leaves {self.total - 12 - self.hdr_len}")
        return data

    def _blob_bytes(self, chunk):
        try:
            self._inflate(chunk)
        except zlib.error as e:
            raise PayloadError(f"blob {self.cur[0]} does not inflate: {e}") from None

    def _inflate(self, chunk):
        index, blob, _, hasher, inflater, raw = self.cur
        hasher.update(chunk)
        room = blob["rawSize"] - raw
        out = inflater.decompress(chunk, room + 1)
        raw += len(out)
        if self.keep:
            self.kept[index] += out
        while inflater.unconsumed_tail and raw <= blob["rawSize"]:
            out = inflater.decompress(inflater.unconsumed_tail, blob["rawSize"] - raw + 1)
            if not out:
                break
            raw += len(out)
            if self.keep:
                self.kept[index] += out
        if raw > blob["rawSize"]:
            raise PayloadError(f"blob {index} inflates past its raw size of {blob['rawSize']} bytes")
        self.cur[5] = raw

    def _finish_blob(self):
        index, blob, _, hasher, inflater, raw = self.cur
        got = hasher.intdigest()
        if got != blob["hash"]:
            raise PayloadError(f"blob {index}'s XXH64 is {got:016x}, the header says {blob['hash']:016x}")
        if not inflater.eof or inflater.unused_data or inflater.unconsumed_tail:
            raise PayloadError(f"blob {index} is not exactly one complete gzip stream")
        if raw != blob["rawSize"]:
            raise PayloadError(f"blob {index} inflates to {raw} bytes, the header says {blob['rawSize']}")
        self.verified.append((index, blob["size"], raw))
        self.raw_total += raw
        self.cur = None

    def done(self):
        """Raise unless the whole payload arrived and every blob was verified."""
        if self.pos != self.total or self.header is None or self.cur is not None or self.blobs:
            raise PayloadError("the payload ended before its last blob")


# ---------------------------------------------------------------- password


def password_proof(password, challenge):
    """Section 6.3: HMAC-SHA256 keyed by the password over the domain and the challenge."""
    return hmac.new(password.encode("utf-8"), PASSWORD_DOMAIN + challenge, hashlib.sha256).digest()


def arbiter_proof(secret, challenge):
    """Section 14.2: HMAC-SHA256 keyed by the arbiter secret over its domain and the challenge."""
    return hmac.new(secret, ARBITER_DOMAIN + challenge, hashlib.sha256).digest()


# ---------------------------------------------------------------- reasons

REASONS = {  # section 5.1
    0: ("Generic", "The host refused the connection."),
    1: ("Protocol", "The host and this client speak different protocol versions."),
    2: ("Defs", "Your game content does not match the host's."),
    3: ("UsernameLength", "Usernames must be 3 to 15 characters long."),
    4: ("UsernameChars", "Usernames may only contain letters, digits and underscores."),
    5: ("UsernameAlreadyOnline", "A player with that username is already online."),
    6: ("ServerFull", "The session is full."),
    7: ("BadPassword", "The password is wrong or missing."),
    8: ("Timeout", "The connection timed out."),
    9: ("BadPacket", "The host received a malformed or unexpected packet."),
    10: ("ServerClosing", "The host is shutting down."),
    11: ("SlowClient", "The connection was too slow to keep up with the session."),
    12: ("Kicked", "You were removed from the session."),
    13: ("ClockSync", "The host could not synchronise clocks with this client: the connection is too slow or unsteady."),
    14: ("RateLimited", "Too many connection attempts from your address; wait a few seconds and try again."),
    15: ("SpectatorsFull", "The session has no room for more spectators."),
    16: ("Lagging", "Your game fell too far behind the session."),
    17: ("BadToken", "Your session token is unknown or expired; join again without it."),
    18: ("Replaced", "You rejoined from a new connection; this one is closed."),
    19: ("Desync", "Your game kept diverging from the host's; join again to get a fresh copy of the world."),
    20: ("Banned", "You are banned from this session."),
    21: ("BadArbiterSecret", "The arbiter secret is wrong."),
}
DEF_STATUSES = {0: "ok", 1: "not found", 2: "count differs", 3: "hash differs", 4: "missing"}  # section 5.2
STATUSES = {0: "joining", 1: "downloading", 2: "playing", 3: "spectating", 4: "desynced"}  # section 5.4


class Refused(Exception):
    """The host ended the connection with Server_Disconnect."""


def describe_disconnect(p):
    name, sentence = REASONS.get(p["reason"], (f"reason {p['reason']}", "The host ended the connection."))
    text = p["message"] or sentence
    extra = ""
    if p["reason"] == 2 and p["defStatuses"]:
        extra = " Statuses: " + ", ".join(DEF_STATUSES.get(b, str(b)) for b in p["defStatuses"]) + "."
    if p["reason"] == 2 and p["detail"]:
        try:
            manifest = json.loads(bounded_gunzip(p["detail"], MAX_MANIFEST_SIZE))
            dbs = manifest.get("databases", [])
            extra += " The host's differing databases: " + ", ".join(d.get("type", "?") for d in dbs) + "."
            bad = [d.get("type", "?") for d in dbs if manifest_database_hash(d) != int(d.get("hash", ""), 16)]
            if bad:
                extra += " (The detail's hashes of " + ", ".join(bad) + " do not add up from their defs.)"
        except (ValueError, OSError, EOFError, zlib.error, AttributeError, KeyError, TypeError) as e:
            extra += f" (the detail does not read: {e})"
    return f"refused by the host ({name}): {text}{extra}"


def _uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _str71(s):
    b = s.encode("utf-8")
    return _uvarint(len(b)) + b


def manifest_database_hash(db):
    """Section 7.1's Database.Hash over a manifest database's defs (section 7.3)."""
    defs = sorted(db.get("defs", []), key=lambda d: d["name"].encode("utf-8"))
    data = _str71(db["type"]) + _uvarint(len(defs))
    for d in defs:
        data += _str71(d["name"]) + int(d["hash"], 16).to_bytes(8, "little")
    return xxh64(data)


def node_encoding(node):
    """Section 7.1's node(n) of an element given as (name, {attr: value}, text, [children]).

    text is taken as given: the caller trims it and turns line ends into
    LF as 7.1 says, as an XML reader would.
    """
    name, attrs, text, children = node
    out = _str71(name) + _uvarint(len(attrs))
    for k, v in sorted(attrs.items(), key=lambda kv: (kv[0].encode("utf-8"), kv[1].encode("utf-8"))):
        out += _str71(k) + _str71(v)
    out += _str71(text) + _uvarint(len(children))
    for child in children:
        out += node_encoding(child)
    return out


def def_hash(db_type, def_name, node):
    """Section 7.1's Def.Hash of the def defName of type db_type, whose resolved element is node."""
    return xxh64(_str71(db_type) + _str71(def_name) + node_encoding(node))


def database_summary(db_type, defs):
    """Section 7.1's Database.Hash, as a Client_Defs entry, of defs: [(defName, Def.Hash)]."""
    return {"type": db_type, "count": len(defs),
            "hash": manifest_database_hash({"type": db_type, "defs": [{"name": n, "hash": f"{h:016x}"} for n, h in defs]})}


def bounded_gunzip(data, limit):
    """Inflate a gzip stream, stopping with an error past limit bytes (section 7.3)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = d.decompress(data, limit + 1)
    if len(out) > limit:
        raise ValueError(f"inflates past {limit} bytes")
    if not d.eof:
        raise ValueError("truncated gzip stream")
    return out


# ---------------------------------------------------------------- connection


def now_us():
    """Section 1: microseconds since the Unix epoch."""
    return time.time_ns() // 1000


class Connection:
    """Frames over a socket (section 2), with a deadline on every read."""

    def __init__(self, sock, max_frame=DEFAULT_MAX_FRAME):
        self.sock = sock
        self.buf = bytearray()
        self.max_frame = max_frame
        self.last_heard = time.monotonic()

    def send(self, packet, /, **fields):
        self.sock.sendall(encode_frame(packet, fields))

    def _fill(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(max(65536, n - len(self.buf)))
            except socket.timeout:
                return False
            if not data:
                raise EOFError
            self.buf += data
            self.last_heard = time.monotonic()
        return True

    def recv(self, timeout):
        """The next (name, fields), or None when timeout passes first.

        EOFError when the host closed the connection.
        """
        deadline = time.monotonic() + timeout
        if not self._fill(4, deadline):
            return None
        (length,) = struct.unpack_from(">I", self.buf)
        if length == 0:
            raise ProtocolError("a frame of length 0")
        if length > self.max_frame:
            raise ProtocolError(f"a frame of {length} bytes, over the {self.max_frame}-byte limit")
        if not self._fill(4 + length, deadline):
            return None
        pid = self.buf[4]
        body = bytes(self.buf[5:4 + length])
        del self.buf[:4 + length]
        return decode_frame_body(pid, body)


class Client:
    def __init__(self, args, out=sys.stdout):
        self.args = args
        self.out = out
        self.t0 = time.monotonic()
        self.last = self.t0
        self.conn = None
        self.grant = 0
        self.speed = 0
        self.tick = 0
        self.players = {}
        self.player_id = 0
        self.hash_every = 0
        self.acked_tick = None
        self.ready = False
        self.clock_rounds = 0
        self.chat_seen = False
        self.keepalives = 0
        self.tick_acks = 0
        self.commands = 0

    def step(self, text):
        now = time.monotonic()
        print(f"{text} (+{(now - self.last) * 1000:.0f} ms, {now - self.t0:.3f} s)", file=self.out, flush=True)
        self.last = now

    # The packets a client handles at any time after admission (section 6.1).
    def handle_common(self, name, p):
        c = self.conn
        if name == "Server_Keepalive":
            c.send("Client_Keepalive", seq=p["seq"], hostTime=p["hostTime"])
            self.keepalives += 1
        elif name == "Server_Clock":
            c.send("Client_Clock", nonce=p["nonce"], clientTime=now_us())
            self.clock_rounds += 1
        elif name == "Server_Tick":
            if p["granted"] < p["tick"]:
                raise ProtocolError(f"Server_Tick: grant {p['granted']} below tick {p['tick']}")
            for cmd in p["commands"]:
                if cmd["tick"] != p["tick"]:
                    raise ProtocolError(f"Server_Tick: a command stamped {cmd['tick']} in tick {p['tick']}")
            self.tick = max(self.tick, p["tick"])
            self.commands += len(p["commands"])
            self.grant = max(self.grant, p["granted"])
            self.speed = p["speed"]
            self.report_tick()
        elif name == "Server_PlayerList":
            self.player_list(p)
        elif name == "Server_Notice":
            self.step(f"notice: {p['text']}")
        elif name == "Server_Chat":
            self.step(f"chat <{p['name'] or 'host'}> {p['text']}")
            if p["playerID"] == self.player_id and p["text"] == (self.args.chat or "").strip():
                self.chat_seen = True
        elif name == "Server_Desync":
            state = {0: "detected", 1: "repaired", 2: "dropped"}.get(p["state"], str(p["state"]))
            self.step(f"desync {state}: player {p['playerID']} ({p['name']}) at tick {p['tick']}")
        elif name == "Server_Resync":
            # Section 10: only a client that sent Client_Hashes can be repaired;
            # this one never does.
            raise ProtocolError("Server_Resync for a client that reports no hashes")
        elif name == "Server_Disconnect":
            raise Refused(describe_disconnect(p))
        else:
            raise ProtocolError(f"{name} is not allowed here")

    def report_tick(self):
        # Section 9.2 and 11: a player that does not simulate reports each
        # grant as its tick (the "light" mode); a spectator needs no reports.
        if self.ready and not self.args.spectate and self.grant != self.acked_tick:
            self.conn.send("Client_TickAck", tick=self.grant)
            self.acked_tick = self.grant
            self.tick_acks += 1

    def player_list(self, p):
        action = p["action"]
        if action == 0:
            self.players = {q["id"]: q for q in p["players"]}
        for q in p["players"]:
            if action == 1:
                self.players[q["id"]] = q
            elif action == 2:
                self.players.pop(q["id"], None)
            elif action == 3 and q["id"] in self.players:
                self.players[q["id"]]["status"] = q["status"]
            elif action == 4 and q["id"] in self.players:
                self.players[q["id"]]["latencyMs"] = q["latencyMs"]
        if action in (0, 1, 2, 3):
            names = ", ".join(f"{q['name']}({STATUSES.get(q['status'], q['status'])})"
                              for q in sorted(self.players.values(), key=lambda q: q["id"]))
            self.step(f"players: {names}")

    def expect(self, want, timeout, what):
        """Wait for a packet named in want before admission (only Server_Clock may come between)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            got = self.conn.recv(left) if left > 0 else None
            if got is None:
                raise TimeoutError(f"no {what} from the host within {timeout:.0f} s")
            name, p = got
            if name == "Server_Disconnect":
                raise Refused(describe_disconnect(p))
            if name in want:
                return name, p
            if name == "Server_Clock" and "Server_DefsOK" in want:
                self.conn.send("Client_Clock", nonce=p["nonce"], clientTime=now_us())
                self.clock_rounds += 1
                continue
            raise ProtocolError(f"{name} while waiting for {what}")

    def run(self):
        a = self.args
        host, port = a.host, a.port
        sock = socket.create_connection((host, port), timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = Connection(sock)
        self.step(f"connected to {host}:{port}")
        try:
            self.handshake()
            self.download()
            self.stay()
            self.leave()
        finally:
            sock.close()

    def handshake(self):
        a, c = self.args, self.conn
        c.send("Client_Protocol", protocol=a.protocol_version)
        _, ml = self.expect({"Server_ModList"}, 10, "Server_ModList")
        dbs = ml["databases"]
        challenge = ml["passwordChallenge"]
        self.step(f"mod list: game version {ml['gameVersion']!r}, mods {ml['mods']}, {len(dbs)} def databases, "
                  f"password {'required' if challenge else 'not required'}")
        if challenge and len(challenge) != 32:
            raise ProtocolError(f"a password challenge of {len(challenge)} bytes, not 32")
        if challenge and a.password is None:
            raise Refused("the host requires a password; pass --password")
        # Section 7.2 and 11: with no content of our own, declare what the host announced.
        if a.wrong_defs and dbs:
            # For checks of the Defs refusal: declare the first database with another hash.
            dbs = [dict(dbs[0], hash=dbs[0]["hash"] ^ 1)] + dbs[1:]
        c.send("Client_Defs", databases=dbs)
        _, ok = self.expect({"Server_DefsOK"}, 10, "Server_DefsOK")
        self.step(f"defs accepted, clock synced in {self.clock_rounds} round(s): game {ok['gameName']!r}, "
                  f"provisional player {ok['playerID']}")
        self.clock_rounds = 0
        proof = password_proof(a.password, challenge) if challenge else b""
        c.send("Client_Username", name=a.name, passwordProof=proof, spectate=a.spectate)
        _, s = self.expect({"Server_Session"}, 10, "Server_Session")
        self.player_id = s["playerID"]
        self.hash_every = s["hashEvery"]
        self.step(f"admitted as player {s['playerID']} ({'spectator' if a.spectate else 'player'}), "
                  f"hashes every {s['hashEvery']} ticks, rejoin grace {s['graceMs']} ms")
        if s["rejoin"]:
            # Section 6.6: only an answer to a held world, which this client never names.
            raise ProtocolError(f"Server_Session answers a held world ({s['rejoin']}: {s['why']!r}) this client did not name")

    def download(self, keep=False, first=None):
        """Downloads and verifies the world payload; keep holds the inflated blobs in self.verifier.kept.

        first: a Server_WorldData chunk already read, handled before the next packet.
        """
        c = self.conn
        verifier = None
        received = 0
        started = None
        while True:
            got = ("Server_WorldData", first) if first is not None else c.recv(SILENCE_LIMIT)
            first = None
            if got is None:
                raise TimeoutError(f"the host sent nothing for {SILENCE_LIMIT:.0f} s during the download")
            name, p = got
            if name != "Server_WorldData":
                self.handle_common(name, p)
                continue
            total, off, data = p["total"], p["offset"], p["data"]
            if verifier is None:
                if total > self.args.max_world:
                    raise PayloadError(f"the world is {total} bytes, over this client's limit of {self.args.max_world}")
                verifier = PayloadVerifier(total, keep=keep)
                started = time.monotonic()
                self.step(f"download started: {total} bytes")
            if total != verifier.total:
                raise ProtocolError(f"a chunk's total changed from {verifier.total} to {total}")
            if off != received:
                raise ProtocolError(f"a chunk at offset {off}, expected {received}")
            if off + len(data) > total:
                raise ProtocolError(f"a chunk runs past the total ({off}+{len(data)} > {total})")
            had_header = verifier.header is not None
            verifier.feed(data)
            received += len(data)
            c.send("Client_Ack", received=received)
            if not had_header and verifier.header is not None:
                h = verifier.header
                self.step(f"header verified: hash {verifier.hdr_hash:016x}, {verifier.hdr_len} bytes, tick {h['tick']}, "
                          f"grant {h['granted']}, {len(h['maps'])} maps, faction {h['faction']}, "
                          f"{sum(len(x['commands']) for x in h['commands'])} queued commands")
            if received == total:
                break
        verifier.done()
        secs = time.monotonic() - started
        self.step(f"world verified: {len(verifier.verified)} blobs, {total} bytes, {verifier.raw_total} bytes "
                  f"inflated, every size and XXH64 matches ({total / 1024 / max(secs, 1e-6):.0f} KiB/s)")
        self.header = verifier.header
        self.verifier = verifier
        # Section 8.2: the header's g is a grant too (every command below it
        # is in the header); Server_Tick packets may only raise it.
        self.grant = max(self.grant, self.header["granted"])
        self.tick = max(self.tick, self.header["tick"])

    def stay(self):
        a, c, h = self.args, self.conn, self.header
        # Section 11: the header's tick and world hash, the state verified.
        c.send("Client_WorldReady", tick=h["tick"], worldHash=h["worldHash"])
        self.ready = True
        self.step(f"WorldReady tick={h['tick']} hash={h['worldHash']:016x} grant={self.grant}")
        self.report_tick()
        end = time.monotonic() + a.stay
        chat_at = time.monotonic() + min(1.0, a.stay / 2)
        chatted = False
        while True:
            now = time.monotonic()
            if now >= end:
                break
            if a.chat and not chatted and now >= chat_at:
                c.send("Client_Chat", text=a.chat)
                chatted = True
                self.step(f"chat sent: {a.chat}")
            wait = min(end, chat_at) - now if a.chat and not chatted else end - now
            got = c.recv(max(0.0, min(wait, 1.0)))
            if got is None:
                if time.monotonic() - c.last_heard > SILENCE_LIMIT:
                    raise TimeoutError(f"the host sent nothing for {SILENCE_LIMIT:.0f} s")
                continue
            self.handle_common(*got)
        self.step(f"stayed {a.stay:g} s: host tick {self.tick}, grant {self.grant}, speed {self.speed}, "
                  f"answered {self.keepalives} keepalive(s) and {self.clock_rounds} clock round(s), "
                  f"sent {self.tick_acks} tick report(s); saw {self.commands} command(s)")
        if a.chat and not self.chat_seen:
            raise ProtocolError("the host did not relay our chat line back")

    def leave(self):
        c = self.conn
        c.send("Client_Leave", why="done")
        # Section 6.5 and 4 (id 11): the host closes without Server_Disconnect.
        deadline = time.monotonic() + 5
        try:
            while True:
                left = deadline - time.monotonic()
                got = c.recv(left) if left > 0 else None
                if got is None:
                    raise TimeoutError("the host did not close the connection within 5 s of Client_Leave")
                name, p = got
                if name == "Server_Disconnect":
                    raise Refused("the host answered Client_Leave with " + describe_disconnect(p))
                if name in ("Server_Keepalive", "Server_Clock"):
                    continue  # no need to answer: we are leaving
                self.handle_common(name, p)
        except (EOFError, ConnectionResetError):
            pass
        self.step("left cleanly")


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Join a lockhost session, verify its world, stay, and leave.")
    ap.add_argument("address", help="HOST[:PORT] (default port 30502)")
    ap.add_argument("--name", default="PyClient", help="username: 3 to 15 letters, digits or _ (default PyClient)")
    ap.add_argument("--password", help="the session password, if the host has one")
    ap.add_argument("--spectate", action="store_true", help="join as a spectator (sends no tick reports)")
    ap.add_argument("--stay", type=float, default=20.0, help="seconds to stay after WorldReady (default 20)")
    ap.add_argument("--chat", help="one chat line to send once in")
    ap.add_argument("--max-world", type=int, default=DEFAULT_MAX_WORLD, help="largest world payload accepted, bytes")
    # For checks of the refusals: another protocol version, a wrong def database hash.
    ap.add_argument("--protocol-version", type=int, default=PROTOCOL_VERSION, help=argparse.SUPPRESS)
    ap.add_argument("--wrong-defs", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    host, _, port = a.address.rpartition(":")
    if not host or port.startswith("]") or not port.isdigit():
        host, port = a.address, str(DEFAULT_PORT)
    a.host, a.port = host.strip("[]"), int(port)
    if not a.name or len(a.name.encode("utf-8")) > MAX_NAME_BYTES:
        ap.error(f"--name must be 1 to {MAX_NAME_BYTES} bytes")
    if a.chat is not None and len(a.chat.encode("utf-8")) > MAX_CHAT_BYTES:
        ap.error(f"--chat must be at most {MAX_CHAT_BYTES} bytes")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    client = Client(a)
    try:
        client.run()
    except Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    except PayloadError as e:
        print(f"error: the world payload failed verification: {e}", file=sys.stderr)
        return 1
    except ProtocolError as e:
        print(f"error: the host sent a wrong packet: {e}", file=sys.stderr)
        return 1
    except EOFError:
        print("error: the host closed the connection without a word.", file=sys.stderr)
        return 1
    except (OSError, TimeoutError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
