package corpus

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
)

// The recorded session's world, of the host's content (content.go), kept
// small so that the seeds made from it stay small.
var worldConfig = colony.Config{Maps: 2, Width: 64, Height: 64, Seed: 1, ThingsPerMap: 60, PawnsPerMap: 4}

const (
	// hashEvery is the recorded host's checkpoint interval, shorter than
	// the default so the desync is found soon.
	hashEvery = 30
	// botCommands is how many random valid commands the playing client
	// sends (besides one speed change).
	botCommands = 16
	// corruptMap is the map the second client corrupts on its side.
	corruptMap = 1
)

// Options configures Record. The zero value works.
type Options struct {
	// Logger receives the host's and the clients' logs (default: none).
	Logger *slog.Logger
	// RealMods, if it names an existing folder, is a folder of mod folders
	// (the real mods the defs tests read) whose def XML files and def
	// manifests join those of the embedded content.
	RealMods string
	// Timeout bounds the whole session (default 2 minutes).
	Timeout time.Duration
}

// Recording is what one recorded session produced.
type Recording struct {
	// Conns are the host's TCP connections in accept order: a client that
	// joins and plays commands, a client whose map diverges and is
	// explained and repaired, a client refused for differing defs, and a
	// client that fetches the host's content.
	Conns []Conn
	// StatusRequests and StatusReplies are the UDP status datagrams the
	// host read and wrote, in order.
	StatusRequests, StatusReplies [][]byte
	// Save is the save file the host wrote when it stopped.
	Save []byte
	// DesyncReports are the desync reports the host wrote.
	DesyncReports [][]byte
	// KnownHosts is a known hosts file tlsid wrote after pinning two hosts.
	KnownHosts []byte
	// DefFiles are def XML files: the host's content's and the real
	// mods'.
	DefFiles [][]byte
	// Manifests are def manifests written for the host's content and the
	// real mods.
	Manifests [][]byte
}

// Record runs a real session over loopback TCP and records what crossed
// it: a host of the default content and a small mod, which it shares,
// one client that joins, plays random valid commands and chats, one whose
// map is corrupted so the host detects the desync, explains it with the
// client's help and repairs it and that then leaves, one refused for its
// defs, one that lacks the mod and fetches it over the session connection,
// and two status queries: every packet of the wire registry but
// Server_Disconnect and relay mode's three. It also collects the save, the desync report, a
// known hosts file and def files (see Recording).
func Record(ctx context.Context, opts Options) (*Recording, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "lockhost-corpus-")
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer os.RemoveAll(dir)

	hc, err := writeContent(filepath.Join(dir, "content"))
	if err != nil {
		return nil, err
	}
	rec := &Recording{}
	if err := recordSession(ctx, log, dir, hc, rec); err != nil {
		return nil, err
	}
	if rec.KnownHosts, err = knownHosts(ctx, filepath.Join(dir, "tls")); err != nil {
		return nil, err
	}
	if rec.DefFiles, rec.Manifests, err = defFiles(hc, opts.RealMods); err != nil {
		return nil, err
	}
	return rec, nil
}

// recordSession runs the host and its clients and fills rec's traffic,
// save and desync reports.
func recordSession(ctx context.Context, log *slog.Logger, dir string, hc *hostContent, rec *Recording) error {
	savePath := filepath.Join(dir, "world"+saves.Ext)
	desyncDir := filepath.Join(dir, desync.DirName)
	srv, err := newHost(log, hc, savePath, desyncDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("record: listen: %w", err)
	}
	tl := &tapListener{Listener: ln}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return fmt.Errorf("record: status port: %w", err)
	}
	defer pc.Close()
	tpc := &tapPacketConn{PacketConn: pc}

	hctx, stopHost := context.WithCancel(ctx)
	served := make(chan error, 1)
	statusServed := make(chan error, 1)
	go func() { served <- srv.Serve(hctx, tl) }()
	go func() { statusServed <- srv.ServeStatus(hctx, tpc) }()
	hostRunning := true
	stop := func() error {
		if !hostRunning {
			return nil
		}
		hostRunning = false
		stopHost()
		err := <-served
		<-statusServed
		return err
	}
	defer stop()

	s := &session{ctx: ctx, srv: srv, addr: ln.Addr().String(), bundle: hc.bundle, content: hc, dir: dir, log: log}
	if err := s.play(tl, pc.LocalAddr().String()); err != nil {
		s.close()
		return err
	}
	// Stopping the host tells both players it is closing and writes the
	// save.
	if err := stop(); err != nil {
		s.close()
		return fmt.Errorf("record: host: %w", err)
	}
	s.wait()

	rec.Conns = tl.snapshot()
	rec.StatusRequests, rec.StatusReplies = tpc.datagrams()
	if rec.Save, err = os.ReadFile(savePath); err != nil {
		return fmt.Errorf("record: the host's save: %w", err)
	}
	rec.DesyncReports, err = desyncReports(desyncDir)
	return err
}

// newHost is the recorded session's host: a new world of hc's content,
// which it shares, saved to savePath when it stops (only then), its
// desync reports written to desyncDir.
func newHost(log *slog.Logger, hc *hostContent, savePath, desyncDir string) (*host.Server, error) {
	bundle := hc.bundle
	world, err := colony.New(bundle.Content, worldConfig)
	if err != nil {
		return nil, fmt.Errorf("record: generate world: %w", err)
	}
	const gameName = "lockhost colony"
	cfg := host.Config{
		GameName: gameName,
		Save:     host.SaveConfig{Path: savePath, Every: -1, Meta: func() saves.Meta { return hostcontent.SaveMeta(bundle, gameName) }},
		Logger:   log,
		Desync:   host.DesyncConfig{HashEvery: hashEvery, Dir: desyncDir},
	}
	content := hostcontent.Content(bundle, log)
	content.Share = hc.share
	srv, err := host.New(cfg, content, world)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return srv, nil
}

// desyncReports reads the desync reports the host wrote to dir, of which
// there must be one at least.
func desyncReports(dir string) ([][]byte, error) {
	names, err := desync.Names(dir)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	var reports [][]byte
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("record: desync report: %w", err)
		}
		reports = append(reports, b)
	}
	if len(reports) == 0 {
		return nil, errors.New("record: the host wrote no desync report")
	}
	return reports, nil
}

// session is the clients of a recorded session.
type session struct {
	ctx     context.Context
	srv     *host.Server
	addr    string
	bundle  *gamecontent.Bundle // the host's content, which the players join with
	content *hostContent
	dir     string // for the fetching joiner's content cache
	log     *slog.Logger

	players []*player

	repaired  atomic.Bool // the first player heard of the second's repair
	resynced  atomic.Bool // the second player's repair went in
	applied   atomic.Int64
	corruptAt atomic.Uint64
	corrupted atomic.Bool
}

// player is one joined client.
type player struct {
	sess *join.Session
	ran  chan error
	stop context.CancelFunc // ends Run, which then leaves the session
}

// play joins both players, plays commands, has the second player's map
// corrupted and repaired, gets a client refused, chats, has the second
// player leave and asks for the status, until every packet the session
// can carry before its end was seen.
func (s *session) play(tl *tapListener, statusAddr string) error {
	if err := s.ping(statusAddr); err != nil {
		return err
	}
	alice, err := s.joinAlice()
	if err != nil {
		return err
	}
	s.corruptAt.Store(^uint64(0))
	bob, err := s.joinBob()
	if err != nil {
		return err
	}
	// Two checkpoint intervals after Bob's ready tick, at least one of
	// Bob's checkpoints matched and both sides kept their copies of it:
	// the host can explain the desync (Server_ExplainRequest, and Bob's
	// Client_ExplainReply).
	s.corruptAt.Store(bob.sess.Timings().ReadyTick + 2*hashEvery + hashEvery/2)
	if err := s.playCommands(alice); err != nil {
		return err
	}

	if err := s.refused(); err != nil {
		return err
	}
	if err := s.fetchContent(s.dir); err != nil {
		return err
	}
	if err := alice.sess.Chat("good morning"); err != nil {
		return fmt.Errorf("record: chat: %w", err)
	}
	// The host explains Bob's desync while it repairs it, each on its own
	// time: Bob stays until the host has his answer.
	err = s.waitFor("the repair, its explanation and the commands", func() bool {
		return s.repaired.Load() && s.resynced.Load() && s.applied.Load() >= botCommands && s.srv.Overview().Stats.Explained > 0
	})
	if err != nil {
		return err
	}
	// Bob's part is done: he leaves on purpose (Run sends the leave when
	// its context ends), while Alice stays until the host stops.
	bob.stop()
	want := allIDs()
	err = s.waitFor("every packet of a live session", func() bool {
		return len(missingIDs(tl.snapshot(), want)) == 0
	})
	if err != nil {
		return fmt.Errorf("%w (packets not seen: %v)", err, missingIDs(tl.snapshot(), want))
	}
	return s.ping(statusAddr)
}

// joinAlice joins the player who plays: she counts the commands applied
// and hears of Bob's repair.
func (s *session) joinAlice() (*player, error) {
	return s.join("Alice", func(c *join.Config) {
		c.OnApply = func(lockstep.Command) { s.applied.Add(1) }
		c.Desync = func(d join.DesyncEvent) {
			if d.Kind == join.DesyncRepaired {
				s.repaired.Store(true)
			}
		}
	})
}

// joinBob joins the player whose map is corrupted once, on the first
// tick from corruptAt on, and then repaired.
func (s *session) joinBob() (*player, error) {
	return s.join("Bob", func(c *join.Config) {
		c.OnStep = func(sim lockstep.Sim) {
			if sim.Tick() < s.corruptAt.Load() || s.corrupted.Swap(true) {
				return
			}
			if w, ok := sim.(*colony.World); ok {
				if err := w.Perturb(corruptMap); err != nil {
					s.log.Error("corrupt a map", "err", err)
				}
			}
		}
		c.Resynced = func(join.Resync) { s.resynced.Store(true) }
	})
}

// playCommands has p set the speed to 1 and then send botCommands random
// valid commands, drawn from a fixed seed in p's world, 20 ms apart.
func (s *session) playCommands(p *player) error {
	speed := lockstep.SetSpeed(1)
	if err := p.sess.Send(speed.MapID, speed.Kind, speed.Payload); err != nil {
		return fmt.Errorf("record: send: %w", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sent := 0
	for sent < botCommands {
		cmd, ok, err := s.randomCommand(p, rng)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := p.sess.Send(cmd.MapID, cmd.Kind, cmd.Payload); err != nil {
			return fmt.Errorf("record: send: %w", err)
		}
		sent++
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// randomCommand draws a random valid command in p's world, on the
// session's own goroutine; ok is false when there was none to draw.
func (s *session) randomCommand(p *player, rng *rand.Rand) (lockstep.Command, bool, error) {
	var cmd lockstep.Command
	var ok bool
	done := make(chan struct{})
	if !p.sess.Do(func(sim lockstep.Sim) {
		defer close(done)
		if w, isColony := sim.(*colony.World); isColony {
			cmd, ok = colony.RandomCommand(w, rng)
		}
	}) {
		return lockstep.Command{}, false, errors.New("record: the playing client left")
	}
	// Do only queues the function: wait until it ran.
	select {
	case <-done:
	case <-s.ctx.Done():
		return lockstep.Command{}, false, fmt.Errorf("record: %w", s.ctx.Err())
	}
	return cmd, ok, nil
}

// allIDs are the packets a session carries before the host stops: every
// packet in the wire registry but Server_Disconnect, which comes at the
// end, and relay mode's three, which a simulating host's session never
// carries (relay's own tests and FuzzUpload cover an upload).
func allIDs() []wire.ID {
	var ids []wire.ID
	for _, id := range wire.IDs() {
		switch id {
		case wire.IDServerDisconnect, wire.IDClientUpload, wire.IDServerUploadRequest, wire.IDServerUploadResult:
		default:
			ids = append(ids, id)
		}
	}
	return ids
}

// missingIDs are the packets of want that no connection carried.
func missingIDs(conns []Conn, want []wire.ID) []wire.ID {
	seen := map[wire.ID]bool{}
	for _, c := range conns {
		for _, f := range Frames(c.FromClient) {
			seen[f.ID] = true
		}
		for _, f := range Frames(c.FromHost) {
			seen[f.ID] = true
		}
	}
	var out []wire.ID
	for _, id := range want {
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out
}

func (s *session) waitFor(what string, cond func() bool) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-s.ctx.Done():
			return fmt.Errorf("record: waiting for %s: %w", what, s.ctx.Err())
		}
	}
	return nil
}

// join joins as name and follows the session.
func (s *session) join(name string, opt func(*join.Config)) (*player, error) {
	cfg := join.Config{
		Addr: s.addr, Name: name, Databases: s.bundle.Summary(),
		MapLoader: colony.MapLoader(s.bundle.Content), Logger: s.log,
	}
	opt(&cfg)
	sess, err := join.Join(s.ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("record: %s joins: %w", name, err)
	}
	ctx, stop := context.WithCancel(s.ctx)
	p := &player{sess: sess, ran: make(chan error, 1), stop: stop}
	go func() { p.ran <- sess.Run(ctx) }()
	s.players = append(s.players, p)
	return p, nil
}

// refused joins with one def database changed, which the host refuses
// with the host's manifest of that database.
func (s *session) refused() error {
	dbs := slices.Clone(s.bundle.Summary())
	dbs[0].Hash ^= 1
	_, err := join.Join(s.ctx, join.Config{
		Addr: s.addr, Name: "Mallory", Databases: dbs,
		MapLoader: colony.MapLoader(s.bundle.Content), Logger: s.log,
	})
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonDefs {
		return fmt.Errorf("record: a joiner with other defs was not refused for them: %v", err)
	}
	return nil
}

// ping asks the host for its status over UDP.
func (s *session) ping(addr string) error {
	if _, _, err := status.Ping(s.ctx, addr, 5*time.Second); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// close ends the players' sessions.
func (s *session) close() {
	for _, p := range s.players {
		p.sess.Close()
	}
	s.wait()
}

// wait waits for the players' sessions to end.
func (s *session) wait() {
	for _, p := range s.players {
		select {
		case <-p.ran:
		case <-time.After(10 * time.Second):
			p.sess.Close()
			<-p.ran
		}
		p.stop()
	}
	s.players = nil
}

// knownHosts pins two TLS hosts, each with its own tlsid identity, the way
// a joiner does on first use, and returns the known hosts file tlsid
// wrote.
func knownHosts(ctx context.Context, dir string) ([]byte, error) {
	known := &tlsid.KnownHosts{Path: filepath.Join(dir, "known_hosts")}
	for i := range 2 {
		cert, _, err := tlsid.LoadOrCreate(filepath.Join(dir, fmt.Sprintf("host%d", i)))
		if err != nil {
			return nil, fmt.Errorf("record: TLS identity: %w", err)
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", tlsid.ServerConfig(cert))
		if err != nil {
			return nil, fmt.Errorf("record: TLS listen: %w", err)
		}
		accepted := make(chan error, 1)
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				accepted <- err
				return
			}
			defer nc.Close()
			accepted <- nc.(*tls.Conn).HandshakeContext(ctx)
		}()
		addr := ln.Addr().String()
		cfg, learned := tlsid.ClientConfig(addr, "", known)
		d := tls.Dialer{Config: cfg}
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			nc.Close()
			err = <-accepted
		}
		ln.Close()
		if err != nil {
			return nil, fmt.Errorf("record: TLS handshake: %w", err)
		}
		fp, isNew := learned()
		if !isNew {
			return nil, fmt.Errorf("record: host %s was not new to the known hosts file", addr)
		}
		if err := known.Remember(addr, fp); err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
	}
	b, err := os.ReadFile(known.Path)
	if err != nil {
		return nil, fmt.Errorf("record: known hosts: %w", err)
	}
	return b, nil
}

// defFiles returns the def XML files of the host's content (the default
// content and recordMod) and of the mod folders in realMods (if it
// exists), each once, and the def manifests of the host's content and of
// each real mod.
func defFiles(hc *hostContent, realMods string) (xmls, manifests [][]byte, err error) {
	seen := map[string]bool{}
	addXML := func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			xmls = append(xmls, b)
		}
	}
	addManifest := func(set *defs.Set) error {
		var buf bytes.Buffer
		if err := defs.WriteManifest(&buf, set.Manifest()); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		manifests = append(manifests, buf.Bytes())
		return nil
	}
	for _, fsys := range []fs.FS{colony.DefaultContentFS(), os.DirFS(hc.mod)} {
		if err := collectDefXML(fsys, addXML); err != nil {
			return nil, nil, err
		}
	}
	if err := addManifest(hc.bundle.Set); err != nil {
		return nil, nil, err
	}
	if realMods == "" {
		return xmls, manifests, nil
	}
	entries, err := os.ReadDir(realMods)
	if errors.Is(err, fs.ErrNotExist) {
		return xmls, manifests, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("record: real mods: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		modDir := filepath.Join(realMods, e.Name())
		if err := collectDefXML(os.DirFS(modDir), addXML); err != nil {
			return nil, nil, err
		}
		set, err := defs.ScanDirs([]string{modDir}, defs.Options{GameVersion: gamecontent.DefaultGameVersion})
		if err != nil {
			return nil, nil, fmt.Errorf("record: scan %s: %w", e.Name(), err)
		}
		if err := addManifest(set); err != nil {
			return nil, nil, err
		}
	}
	return xmls, manifests, nil
}

// collectDefXML passes add every .xml file in a Defs folder of fsys, in
// path order.
func collectDefXML(fsys fs.FS, add func([]byte)) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".xml" || !slices.Contains(strings.Split(path.Dir(p), "/"), "Defs") {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("record: def file: %w", err)
		}
		add(b)
		return nil
	})
}
