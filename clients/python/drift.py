"""Drift: a small deterministic lockstep game for the Python relay client.

The world holds a few maps. Each map is a grid of counters crossed by
particles; every tick each particle moves by its velocity (fixed point,
1/256 of a cell), bounces off the edges and adds one to the counter of
the cell it lands on; every 32 ticks each counter loses an eighth. The
world keeps a score and a 64-bit xorshift state that advances each tick.
Everything is integer arithmetic, so any machine that applies the same
commands at the same ticks reaches the same bytes and the same hashes.

Commands (the kind is Client_Command's k, the payload its d):

- SPAWN (1), on a map: x, y (uint16, fixed point), vx, vy (int16):
  a particle; ignored when the map holds MAX_PARTICLES already.
- POKE (2), on a map: x, y (uint8), amount (int32): added to a counter.
- KICK (3), on a map: no payload: every particle turns a quarter.
- SCORE (4), on the world (map -1): amount (int32) added to the score.

A command with a payload of the wrong size, on a map the world does not
have, or of an unknown kind changes nothing, on every client alike.

Def databases (docs/protocol.md, sections 7.1 and 14.9): drift has one,
DriftCommandDef, a def per command. It has no XML files, so each def is
hashed as the element it would be,
<DriftCommandDef><defName>Spawn</defName><kind>1</kind>
<payload>x y uint16, vx vy int16</payload></DriftCommandDef>, with 7.1's
encoding. An arbiter declares these to a relay host that takes its
databases from the arbiter.

Encodings (big-endian): a map is "DRM1", id int32, width and height
uint16, the counters as uint32, the particle count uint16 and each
particle as four int32; the world is "DRW1", tick uint64, rng uint64,
score int64, the map count uint32 and each map ID as int32. A map's
hash is XXH64 of its encoding; the world hash is XXH64 of the world's
encoding followed by each map's hash as uint64, in map order.
"""

import struct

from lockhost_client import database_summary, def_hash, xxh64

SPAWN, POKE, KICK, SCORE = 1, 2, 3, 4
COMMAND_DEF_TYPE = "DriftCommandDef"
# (defName, kind, payload) of each command: the defs of DriftCommandDef.
COMMAND_DEFS = (("Spawn", SPAWN, "x y uint16, vx vy int16"), ("Poke", POKE, "x y uint8, amount int32"),
                ("Kick", KICK, ""), ("Score", SCORE, "amount int32"))
WORLD_SCOPE = -1
FIX = 256  # fixed point: 256 units a cell
MAX_PARTICLES = 64
MAX_SIDE = 256
DECAY_EVERY = 32
_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1


def _i32(v):
    """Wrap to a signed 32-bit integer, as a C int32 would."""
    v &= _M32
    return v - (1 << 32) if v >> 31 else v


def _i64(v):
    v &= _M64
    return v - (1 << 64) if v >> 63 else v


class FormatError(ValueError):
    """A world or map encoding that does not read."""


class Map:
    """One map: a grid of uint32 counters and a list of particles [x, y, vx, vy]."""

    def __init__(self, map_id, width, height):
        if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
            raise FormatError(f"map {map_id}: a side out of 1 to {MAX_SIDE}")
        self.id = map_id
        self.w = width
        self.h = height
        self.cells = [0] * (width * height)
        self.particles = []

    def step(self, tick):
        """One tick of the map's rule; tick is the tick being stepped to."""
        xmax, ymax = self.w * FIX - 1, self.h * FIX - 1
        cells, w = self.cells, self.w
        for p in self.particles:
            x, y, vx, vy = p
            x += vx
            y += vy
            if x < 0:
                x, vx = -x, -vx
            elif x > xmax:
                x, vx = 2 * xmax - x, -vx
            if y < 0:
                y, vy = -y, -vy
            elif y > ymax:
                y, vy = 2 * ymax - y, -vy
            x = min(max(x, 0), xmax)  # a velocity larger than the map folds back inside
            y = min(max(y, 0), ymax)
            p[0], p[1], p[2], p[3] = x, y, vx, vy
            i = (y // FIX) * w + x // FIX
            cells[i] = (cells[i] + 1) & _M32
        if tick % DECAY_EVERY == 0:
            self.cells = [c - (c >> 3) for c in cells]

    def encode(self):
        out = [b"DRM1", struct.pack(">iHH", self.id, self.w, self.h)]
        out.append(struct.pack(f">{len(self.cells)}I", *self.cells))
        out.append(struct.pack(">H", len(self.particles)))
        for p in self.particles:
            out.append(struct.pack(">4i", *p))
        return b"".join(out)

    @classmethod
    def decode(cls, data):
        data = bytes(data)
        if len(data) < 14 or data[:4] != b"DRM1":
            raise FormatError("not a drift map")
        map_id, w, h = struct.unpack_from(">iHH", data, 4)
        m = cls(map_id, w, h)
        n = w * h
        off = 12
        if len(data) < off + 4 * n + 2:
            raise FormatError(f"map {map_id}: too short for {w}x{h} counters")
        m.cells = list(struct.unpack_from(f">{n}I", data, off))
        off += 4 * n
        (count,) = struct.unpack_from(">H", data, off)
        off += 2
        if count > MAX_PARTICLES or len(data) != off + 16 * count:
            raise FormatError(f"map {map_id}: {count} particles do not fit its bytes")
        m.particles = [list(struct.unpack_from(">4i", data, off + 16 * i)) for i in range(count)]
        for x, y, _, _ in m.particles:
            if not (0 <= x < w * FIX and 0 <= y < h * FIX):
                raise FormatError(f"map {map_id}: a particle outside the map")
        return m

    def hash(self):
        return xxh64(self.encode())


class World:
    """The whole game state: the world-level values and the maps, in order."""

    def __init__(self, tick=0, rng=0x9E3779B97F4A7C15, score=0):
        self.tick = tick
        self.rng = rng or 1  # xorshift never leaves 0
        self.score = score
        self.maps = []

    @classmethod
    def new(cls, seed, maps=3, side=16):
        """A fresh world at tick 0: `maps` maps of side x side, each with a few particles from the seed."""
        w = cls(rng=(seed * 0x9E3779B97F4A7C15 + 1) & _M64)
        for i in range(maps):
            m = Map(i, side, side)
            for _ in range(4):
                r = w._next()
                m.particles.append([r % (side * FIX), (r >> 16) % (side * FIX),
                                    (r >> 32) % 97 - 48, (r >> 40) % 97 - 48])
            w.maps.append(m)
        return w

    def _next(self):
        x = self.rng
        x ^= (x << 13) & _M64
        x ^= x >> 7
        x ^= (x << 17) & _M64
        self.rng = x
        return x

    def map(self, map_id):
        for m in self.maps:
            if m.id == map_id:
                return m
        return None

    def step(self):
        """Steps from tick to tick + 1."""
        self.tick += 1
        self._next()
        for m in self.maps:
            m.step(self.tick)
            self.score = _i64(self.score + len(m.particles))

    def apply(self, map_id, kind, payload):
        """Applies one command; returns whether it changed anything."""
        payload = bytes(payload)
        if kind == SCORE and map_id == WORLD_SCOPE and len(payload) == 4:
            self.score = _i64(self.score + struct.unpack(">i", payload)[0])
            return True
        m = self.map(map_id) if map_id != WORLD_SCOPE else None
        if m is None:
            return False
        if kind == SPAWN and len(payload) == 8 and len(m.particles) < MAX_PARTICLES:
            x, y, vx, vy = struct.unpack(">HHhh", payload)
            m.particles.append([x % (m.w * FIX), y % (m.h * FIX), vx, vy])
            return True
        if kind == POKE and len(payload) == 6:
            x, y, amount = struct.unpack(">BBi", payload)
            if x < m.w and y < m.h:
                i = y * m.w + x
                m.cells[i] = (m.cells[i] + amount) & _M32
                return True
        if kind == KICK and not payload:
            for p in m.particles:
                p[2], p[3] = -p[3], p[2]
            return True
        return False

    def encode_world(self):
        ids = [m.id for m in self.maps]
        return (b"DRW1" + struct.pack(">QQqI", self.tick, self.rng, self.score, len(ids))
                + struct.pack(f">{len(ids)}i", *ids))

    @staticmethod
    def decode_world(data):
        """(world without maps, the map IDs in order) from a world encoding."""
        data = bytes(data)
        if len(data) < 32 or data[:4] != b"DRW1":
            raise FormatError("not a drift world")
        tick, rng, score, n = struct.unpack_from(">QQqI", data, 4)
        if len(data) != 32 + 4 * n:
            raise FormatError(f"a world of {n} maps does not fit its bytes")
        return World(tick, rng, score), list(struct.unpack_from(f">{n}i", data, 32))

    def map_hashes(self):
        return [(m.id, m.hash()) for m in self.maps]

    def hash(self):
        return xxh64(self.encode_world() + b"".join(struct.pack(">Q", h) for _, h in self.map_hashes()))

    def copy(self):
        w, _ = World.decode_world(self.encode_world())
        w.maps = [Map.decode(m.encode()) for m in self.maps]
        return w


def random_command(rnd, world):
    """A random (mapID, kind, payload) from a random.Random, for a playing bot."""
    kind = rnd.choice((SPAWN, SPAWN, POKE, POKE, KICK, SCORE))
    if kind == SCORE:
        return WORLD_SCOPE, SCORE, struct.pack(">i", rnd.randrange(-1000, 1000))
    m = rnd.choice(world.maps)
    if kind == SPAWN:
        return m.id, SPAWN, struct.pack(">HHhh", rnd.randrange(m.w * FIX), rnd.randrange(m.h * FIX),
                                        rnd.randrange(-96, 97), rnd.randrange(-96, 97))
    if kind == POKE:
        return m.id, POKE, struct.pack(">BBi", rnd.randrange(m.w), rnd.randrange(m.h), rnd.randrange(1, 500))
    return m.id, KICK, b""


def command_def_element(name, kind, payload):
    """A command's def as the element 7.1 hashes: (name, attributes, text, children)."""
    return (COMMAND_DEF_TYPE, {}, "", [("defName", {}, name, []), ("kind", {}, str(kind), []),
                                       ("payload", {}, payload, [])])


def databases(commands=COMMAND_DEFS):
    """Drift's def databases as Client_Defs declares them (section 4, id 1)."""
    defs = [(name, def_hash(COMMAND_DEF_TYPE, name, command_def_element(name, kind, payload)))
            for name, kind, payload in commands]
    return [database_summary(COMMAND_DEF_TYPE, defs)]
