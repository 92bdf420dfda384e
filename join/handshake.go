package join

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// The handshake phase: Client_Protocol, the host's Server_ModList,
// Client_Defs, clock-sync rounds until Server_DefsOK, then the username
// (with the password proof, the puzzle's nonce and, for a rejoin, the
// token and the blobs held). It reads on the calling goroutine, under
// HandshakeTimeout; the host streams from the username on.

// handshake runs the handshake phase and returns the reader of the
// connection, for the reader goroutine.
func (s *Session) handshake(ctx context.Context) (*wire.FrameReader, error) {
	report(s.cfg, PhaseHandshake, 0, 0)
	hs := time.Now()
	s.phaseMu.Lock()
	if ctx.Err() == nil { // else wake has set a deadline that must hold
		_ = s.nc.SetReadDeadline(deadline(s.cfg.HandshakeTimeout))
	}
	s.phaseMu.Unlock()
	fr := wire.NewFrameReader(bufio.NewReaderSize(s.nc, 64<<10), s.cfg.MaxFrame)
	ml, err := s.greet(fr)
	if err != nil {
		return nil, err
	}
	// A host under a password-guessing attack sets a puzzle on the
	// challenge: it is solved while the handshake goes on.
	puzzle, stopPuzzle := s.solvePuzzle(ctx, ml)
	defer stopPuzzle()
	if err := s.compareDefs(fr); err != nil {
		return nil, err
	}
	nonce, err := puzzle()
	if err == nil {
		err = s.introduce(ml, nonce)
	}
	if err != nil {
		s.sections.drop() // stop making sections nobody will take
		return nil, err
	}
	s.timings.Handshake = time.Since(hs)
	return fr, nil
}

// greet announces the protocol and the codecs this client reads and
// takes the host's Server_ModList.
func (s *Session) greet(fr *wire.FrameReader) (*wire.ServerModList, error) {
	protocol := wire.ProtocolVersion
	if s.opt.Protocol != 0 {
		protocol = s.opt.Protocol
	}
	if err := s.write(&wire.ClientProtocol{Protocol: protocol, Codecs: s.codecs(protocol)}); err != nil {
		return nil, err
	}
	p, err := readDirect(fr)
	if err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if s.att != nil {
		s.att.answered = true
	}
	ml, ok := p.(*wire.ServerModList)
	if !ok {
		return nil, protoErr("expected Server_ModList, got %s", p.ID())
	}
	s.info.GameVersion, s.info.Mods = ml.GameVersion, ml.Mods
	return ml, nil
}

// compareDefs sends the def databases' summaries and waits, answering
// the clock-sync rounds, for Server_DefsOK.
func (s *Session) compareDefs(fr *wire.FrameReader) error {
	dbs := make([]wire.DefSummary, len(s.cfg.Databases))
	for i, d := range s.cfg.Databases {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	if err := s.write(&wire.ClientDefs{Databases: dbs}); err != nil {
		return err
	}
	var defsOK *wire.ServerDefsOK
	ph := &phase{unexpected: "expected Server_DefsOK, got %s", on: map[wire.ID]handler{
		wire.IDServerClock:  on(s.answerClock),
		wire.IDServerDefsOK: on(func(p *wire.ServerDefsOK) error { defsOK = p; return nil }),
	}}
	for defsOK == nil {
		p, err := readDirect(fr)
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		if err := ph.handle(p); err != nil {
			return err
		}
	}
	s.info.GameName, s.info.PlayerID = defsOK.GameName, defsOK.PlayerID
	if s.cfg.Sections != nil && len(defsOK.Sections) > 0 {
		s.sections, s.timings.SectionsWhy = s.makeSections(defsOK.Sections)
	}
	return nil
}

// introduce sends the username: with the password proof if the host set
// a challenge, and, to rejoin, the token (Config.Token, else the
// Resume's) and the blobs the Resume holds.
func (s *Session) introduce(ml *wire.ServerModList, nonce uint64) error {
	cfg := s.cfg
	var proof []byte
	if len(ml.PasswordChallenge) > 0 && len(cfg.Password) > 0 {
		proof = password.Proof(cfg.Password, ml.PasswordChallenge)
	}
	token, held := cfg.Token, []wire.HeldBlob(nil)
	if token == nil && cfg.Resume != nil {
		token, held = cfg.Resume.claim()
	}
	var world *wire.HeldWorld
	if cfg.held != nil && token != nil {
		world = cfg.held.claim()
	}
	arbiter, err := s.arbiterProof(ml)
	if err != nil {
		return err
	}
	var made []wire.MadeSection
	if s.sections != nil {
		made = s.sections.offer(cfg.SectionWait)
		s.timings.Sections = len(made)
		if why := s.sections.choice(); why != "" {
			s.timings.SectionsWhy = why
		}
	}
	if s.timings.SectionsWhy != "" {
		// Making terrain is news (it takes this machine's cores); not
		// making it, on every join from the same machine or LAN, is not.
		level := slog.LevelDebug
		if len(made) > 0 {
			level = slog.LevelInfo
		}
		s.cfg.Logger.Log(context.Background(), level, "regenerable sections", "named", len(made), "why", s.timings.SectionsWhy)
	}
	for i := range made {
		made[i].Hash += s.opt.SectionHashSkew
	}
	for id, h := range s.opt.ExtraMade {
		made = append(made, wire.MadeSection{MapID: id, Hash: h})
	}
	return s.write(&wire.ClientUsername{Name: cfg.Name, PasswordProof: proof, PuzzleNonce: nonce, Spectate: cfg.Spectate, Token: token, Resume: held,
		ArbiterProof: arbiter, Held: world, Made: made})
}

// readDirect reads one packet on the calling goroutine (handshake only).
func readDirect(fr *wire.FrameReader) (wire.Packet, error) {
	id, body, err := fr.Next()
	if err != nil {
		return nil, err
	}
	return decodeFromHost(id, body)
}

// decodeFromHost decodes one frame from the host: a client packet is a
// protocol error, and Server_Disconnect becomes a RejectedError.
func decodeFromHost(id wire.ID, body []byte) (wire.Packet, error) {
	if id.FromClient() {
		return nil, protoErr("host sent client packet %s", id)
	}
	p, err := wire.Decode(id, body)
	if err != nil {
		return nil, protoErr("%w", err)
	}
	if d, ok := p.(*wire.ServerDisconnect); ok {
		return nil, &RejectedError{Reason: d.Reason, Message: d.Message, Statuses: d.DefStatuses, Detail: d.Detail}
	}
	return p, nil
}

// codecs are the codecs announced in Client_Protocol: every one this
// build reads, none as protocol 3 (whose clients read gzip only), or the
// test's list.
func (s *Session) codecs(protocol uint32) []uint8 {
	if s.opt.Codecs != nil {
		return s.opt.Codecs
	}
	if protocol < 4 {
		return nil
	}
	var out []uint8
	for _, c := range snapshot.Readable() {
		out = append(out, uint8(c))
	}
	return out
}

// solvePuzzle starts solving the puzzle ml sets, if any, and returns a
// function that waits for the solution, and one that stops the solving.
// It gives up with ctx and after the handshake timeout. The puzzle is on
// the password challenge; on a relay host without a password, on the
// arbiter challenge, solved only by a client that proves the arbiter
// secret (one that proves nothing has nothing to solve).
func (s *Session) solvePuzzle(ctx context.Context, ml *wire.ServerModList) (wait func() (uint64, error), stop func()) {
	challenge := ml.PasswordChallenge
	if len(challenge) == 0 && len(s.cfg.ArbiterSecret) > 0 {
		challenge = ml.ArbiterChallenge
	}
	if ml.PuzzleBits == 0 || len(challenge) == 0 {
		return func() (uint64, error) { return 0, nil }, func() {}
	}
	ctx, cancel := withTimeout(ctx, s.cfg.HandshakeTimeout)
	type solution struct {
		nonce uint64
		err   error
	}
	done := make(chan solution, 1)
	start := time.Now()
	go func() {
		nonce, tried, err := password.SolvePuzzle(ctx, challenge, int(ml.PuzzleBits))
		s.cfg.Logger.Debug("password puzzle", "bits", ml.PuzzleBits, "hashes", tried, "ms", time.Since(start).Milliseconds(), "err", err)
		done <- solution{nonce, err}
	}()
	return func() (uint64, error) {
		r := <-done
		if r.err != nil {
			return 0, fmt.Errorf("the host's password puzzle of %d bits was not solved in time: %w", ml.PuzzleBits, r.err)
		}
		return r.nonce, nil
	}, cancel
}
