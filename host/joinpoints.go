package host

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/host/relay"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// joinPoints keeps the join point that joiners and saves share, and keeps
// one built ahead of need. The session goroutine owns it and is the only
// one to cut, replace or drop the current point; the one field another
// goroutine touches is preparing, which the background build clears when
// it ends (hence an atomic).
type joinPoints struct {
	stats *stats
	log   *slog.Logger
	lazy  bool // Config.Join.LazyJoinPoints: build only when a joiner needs one
	// comp is the configured codec and level, what every point is built
	// with. Set at creation and never changed: readers read its codec in
	// the handshake, to offer it to their joiners.
	comp   snapshot.Compression
	maxAge time.Duration // Config.Join.JoinPointMaxAge
	// rawLimit bounds the raw bytes a point's blobs may declare for it to
	// be transcoded (Config.Relay.WorldRawLimit on a relay host, whose
	// blobs are its arbiter's); 0: no bound but each blob's own.
	rawLimit uint64

	current      *joinPoint  // nil until cut, and after it ages out
	preparing    atomic.Bool // a join point is being built in the background
	lastPrepared time.Time
	tickCost     time.Duration // moving average of one tick's simulation time
	// recipes are the simulation's regenerable sections as of the last
	// cut (sections.go): the session goroutine stores them, handshakes
	// read them.
	recipes atomic.Pointer[[]wire.SectionRecipe]
}

// stepped records how long one tick took to simulate.
func (j *joinPoints) stepped(d time.Duration) {
	if j.tickCost == 0 {
		j.tickCost = d
		return
	}
	j.tickCost += (d - j.tickCost) / 16
}

// refresh drops the current join point, so the joiner being admitted gets
// a new one, when replaying the ticks since it (which the joiner must
// simulate to catch up, at about the host's speed) would take longer than
// twice what building a new one took last time: waiting for the build
// costs the build, and the ticks that pass meanwhile, which take less to
// replay than they take to pass. The catch-up is then bounded by the
// build time instead of growing with the point's age.
//
// Whether a point is kept does not depend on the clock (how old it is
// when a joiner comes), only on its use: a point in use (still being
// built, or being sent to a joiner that has not reported WorldReady) is
// kept, so joiners whose joins overlap share one point; and a point
// nobody was sent yet (one prepared in advance) is kept for the next
// joiner, which is what it was prepared for; expire bounds its age. Only
// a point whose joiners are all in is weighed against a new build.
func (j *joinPoints) refresh(auth *lockstep.Authority) {
	cur := j.current
	if cur == nil || !cur.built.Load() || cur.sending > 0 || !cur.sent {
		return
	}
	ticks := auth.Sim().Tick() - cur.tick
	build := j.stats.snapshot().LastBuild
	if replay := time.Duration(ticks) * j.tickCost; build > 0 && replay > 2*build {
		j.log.Debug("join point replaced for a joiner", "tick", cur.tick, "ticks_since", ticks,
			"replay_ms", float64(replay.Microseconds())/1000, "build_ms", float64(build.Microseconds())/1000)
		j.current = nil
		auth.Queues().Reset()
	}
}

// hand gives the current join point to a joiner being admitted: the point
// is in use until release.
func (j *joinPoints) hand(p *joinPoint) {
	if p == nil {
		return
	}
	p.sending++
	p.sent = true
}

// release ends a joiner's use of p: it is in (WorldReady) or gone.
func (j *joinPoints) release(p *joinPoint) {
	if p != nil {
		p.sending--
	}
}

func newJoinPoints(cfg Config, st *stats) *joinPoints {
	return &joinPoints{stats: st, log: cfg.Logger, lazy: cfg.Join.LazyJoinPoints, comp: cfg.compression(),
		maxAge: cfg.Join.JoinPointMaxAge, rawLimit: cfg.relayRawLimit()}
}

// joinPoint is a cut of the simulation that joiners share. The session
// goroutine only freezes the state (a clone when the simulation can clone
// itself, else an encoded copy); the first joiner that needs the
// compressed form builds it, off the session goroutine, and the others
// wait for that one result. It holds one compressed copy per codec in
// use, never one per joiner: the configured codec's, built from the
// state (which is dropped then), and, for joiners that do not read that
// codec, a copy transcoded from it when the first of them asks.
type joinPoint struct {
	state    snapshot.State
	versions []uint64
	prev     *snapshot.Point
	cutAt    time.Time
	tick     uint64      // the state's tick
	built    atomic.Bool // compressed in the configured codec
	// sending counts the joiners admitted to this point that are not in
	// yet (WorldReady) and still connected; sent is whether any joiner was
	// ever admitted to it. The session goroutine alone touches both.
	sending int
	sent    bool
	stats   *stats
	log     *slog.Logger
	comp    snapshot.Compression // what the state is built with
	// rawLimit bounds a transcode (joinPoints.rawLimit).
	rawLimit uint64
	once     sync.Once
	point    *snapshot.Point
	err      error

	mu     sync.Mutex
	others map[snapshot.Codec]*codedPoint // transcoded copies, by codec
	thins  map[snapshot.Codec]*thinPoint  // thin map blobs, by codec (sections.go)

	upload *relay.Cut // relay mode: the arbiter's upload that is this point (relay.go)
}

// codedPoint is a join point transcoded to another codec, built once.
type codedPoint struct {
	once  sync.Once
	point *snapshot.Point
	err   error
}

// compression is how a payload is compressed for a client that reads
// codec: the configured level when it is the configured codec, else the
// codec's default level. Join points (their copies in other codecs
// included) and repairs all take it from here.
func compression(configured snapshot.Compression, codec snapshot.Codec) snapshot.Compression {
	if codec == configured.Codec {
		return configured
	}
	return snapshot.Compression{Codec: codec}
}

// compression is the compression of a repair for a client that reads
// codec: see the function of that name.
func (j *joinPoints) compression(codec snapshot.Codec) snapshot.Compression {
	return compression(j.comp, codec)
}

// compressed returns the join point in codec, building it on first use:
// with the configured compression, or transcoded from that for a client
// that does not read the configured codec.
func (j *joinPoint) compressed(codec snapshot.Codec) (*snapshot.Point, error) {
	if err := j.awaitUpload(); err != nil {
		return nil, err
	}
	j.once.Do(func() {
		if j.upload != nil {
			j.buildUploaded()
			return
		}
		start := time.Now()
		j.point, j.err = snapshot.Build(j.state, snapshot.BuildOptions{Compression: j.comp, Prev: j.prev, Versions: j.versions})
		j.state, j.prev = nil, nil // the compressed form is all anyone needs now
		if j.err == nil {
			d := time.Since(start)
			j.built.Store(true)
			j.stats.built(j.point, d)
			// Debug: a busy host builds one every JoinPointMaxAge, half of
			// a long session's log at INFO.
			j.log.Debug("join point built", "tick", j.point.Tick, "build_ms", float64(d.Microseconds())/1000,
				"compression", j.comp.String(), "raw_bytes", j.point.RawSize(), "bytes", j.point.CompressedSize(),
				"blobs_compressed", j.point.Compressed, "blobs_reused", j.point.Reused)
		}
	})
	if j.err != nil || codec == j.comp.Codec || j.servesAsIs(codec) {
		return j.point, j.err
	}
	c := compression(j.comp, codec)
	j.mu.Lock()
	o := j.others[c.Codec]
	if o == nil {
		if j.others == nil {
			j.others = map[snapshot.Codec]*codedPoint{}
		}
		o = &codedPoint{}
		j.others[c.Codec] = o
	}
	j.mu.Unlock()
	o.once.Do(func() {
		start := time.Now()
		o.point, o.err = snapshot.Transcode(j.point, c, 0, j.rawLimit)
		if o.err == nil {
			j.log.Info("join point transcoded", "tick", o.point.Tick, "build_ms", float64(time.Since(start).Microseconds())/1000,
				"compression", c.String(), "bytes", o.point.CompressedSize())
		}
	})
	return o.point, o.err
}

// cut freezes the simulation as the new join point and resets the command
// queues to start there.
func (j *joinPoints) cut(auth *lockstep.Authority) error {
	sim := auth.Sim()
	start := time.Now()
	state, err := freeze(sim)
	if err != nil {
		return err
	}
	j.noteSections(sim)
	j.current = &joinPoint{state: state, upload: relayCut(state), versions: snapshot.Versions(sim), prev: j.stats.lastPoint(),
		cutAt: time.Now(), tick: sim.Tick(), stats: j.stats, log: j.log, comp: j.comp, rawLimit: j.rawLimit}
	d := time.Since(start)
	j.stats.cut(d)
	j.log.Debug("join point cut", "tick", sim.Tick(), "cut_ms", float64(d.Microseconds())/1000)
	auth.Queues().Reset()
	return nil
}

// ensure returns the current join point, cutting one if there is none.
func (j *joinPoints) ensure(auth *lockstep.Authority) (*joinPoint, error) {
	if j.current == nil {
		if err := j.cut(auth); err != nil {
			return nil, err
		}
	}
	return j.current, nil
}

// expire drops a join point older than maxAge: nobody may reuse it any
// more, so the commands kept for it can go.
func (j *joinPoints) expire(auth *lockstep.Authority) {
	if j.current != nil && time.Since(j.current.cutAt) > j.maxAge {
		j.current = nil
		auth.Queues().Reset()
	}
}

// prepare keeps a built join point ready so a joiner does not wait for
// compression: when there is none, it cuts one and builds it in the
// background, but not while another build runs and not more often than
// every twenty build times, which bounds the background work at about 5%
// of a core.
func (j *joinPoints) prepare(now time.Time, auth *lockstep.Authority) {
	if j.lazy || j.current != nil || j.preparing.Load() {
		return
	}
	if st := j.stats.snapshot(); now.Sub(j.lastPrepared) < 20*st.LastBuild {
		return
	}
	if err := j.cut(auth); err != nil {
		j.log.Error("cut join point", "err", err)
		return
	}
	j.lastPrepared = now
	j.preparing.Store(true)
	jp, log := j.current, j.log
	go func() {
		defer j.preparing.Store(false)
		if _, err := jp.compressed(jp.comp.Codec); err != nil {
			log.Error("build join point", "err", err)
		}
	}()
}

// freeze takes the state a join point is built from, on the session
// goroutine: a clone if the simulation offers one (a copy, not an
// encoding), else the encoded state.
func freeze(sim lockstep.Sim) (snapshot.State, error) {
	if c, ok := sim.(lockstep.Cloner); ok {
		return c.Clone(), nil
	}
	raw, err := snapshot.Cut(sim)
	if err != nil {
		return nil, err
	}
	return raw.State(), nil
}

// uploaded reports whether the join point's state is there: always for a
// point a simulating host cut, once uploaded for a relay host's.
func (j *joinPoint) uploaded() bool {
	return j.upload == nil || j.upload.Filled()
}

// servesAsIs reports whether an uploaded point goes to a joiner that
// reads codec as it came: every client reads gzip, and one that reads zstd
// reads both; so only a joiner that reads gzip alone, given an upload
// with zstd blobs, gets a copy transcoded to gzip.
func (j *joinPoint) servesAsIs(codec snapshot.Codec) bool {
	return j.upload != nil && (codec == snapshot.Zstd || j.comp.Codec == snapshot.Gzip)
}

// awaitUpload waits, on a joiner's reader, for the upload of a relay
// host's join point; the point is then built from it by buildUploaded.
func (j *joinPoint) awaitUpload() error {
	if j.upload == nil {
		return nil
	}
	_, err := j.upload.Point()
	return err
}

// buildUploaded makes the point from the upload, once, in place of a
// build: the blobs are the arbiter's as they came. The point's codec is
// zstd when any blob is, so that a joiner that reads only gzip gets a
// copy transcoded to it.
func (j *joinPoint) buildUploaded() {
	j.point, j.err = j.upload.Point()
	j.state, j.prev = nil, nil
	if j.err != nil {
		return
	}
	j.comp.Codec = snapshot.Gzip
	if !allGzip(j.point) {
		j.comp.Codec = snapshot.Zstd
	}
	j.built.Store(true)
}
