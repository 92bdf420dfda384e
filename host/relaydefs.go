package host

import (
	"errors"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/wire"
)

// A relay host for a game with no content folders takes its def
// databases from its arbiter (RelayConfig.DefsFromArbiter;
// docs/protocol.md, section 14.9): until the first arbiter is admitted as
// the uploader of the session's world, the host announces no databases
// and compares none, keeping each joiner's Client_Defs; the uploader's is
// then the declaration every joiner must match, as content's databases
// are, and a joiner whose kept Client_Defs does not match it is refused
// at admission as the handshake would have. The declaration stays for
// the session's life and goes into its saves, from which a resumed
// session takes it again, unless the operator clears it
// (Server.ClearDeclaredDefs): the session then awaits a declaration
// again, admits only arbiters, and takes the next one admitted's.
//
// A declaration is every later joiner's Server_ModList, sent before the
// joiner has proved anything: while the session awaits one, a Client_Defs
// body over wire.MaxDeclarationBytes is refused before it is decoded
// (peer.read), so a mod list is the operator's part and at most that.

// errAwaitingDefs refuses a player while the session awaits its
// arbiter's declaration after the operator cleared the last one.
var errAwaitingDefs = &reasonError{reason: wire.ReasonGeneric,
	msg: "The host cleared the session's def databases and awaits its arbiter's: join again shortly."}

// ErrNotDeclaring is ClearDeclaredDefs' error on a host that does not take
// its def databases from an arbiter.
var ErrNotDeclaring = errors.New("the host does not take its def databases from an arbiter (relay mode with defs from the arbiter)")

// ClearDeclaredDefs drops the def databases a relay host with
// DefsFromArbiter took from its arbiter's declaration (docs/protocol.md,
// section 14.9), an operator's way out of a declaration that is wrong
// or hostile: the session awaits a declaration again, which the next
// arbiter admitted makes; until then only arbiters are admitted, and
// players online stay. It returns how many databases were dropped; a
// session already awaiting a declaration is an error.
func (s *Server) ClearDeclaredDefs(by string) (int, error) {
	if s.sess.relay == nil || !s.cfg.Relay.DefsFromArbiter {
		return 0, ErrNotDeclaring
	}
	var dropped int
	var awaiting bool
	err := s.onSession(func() {
		hd := s.sess.defs.Load()
		if awaiting = hd.awaiting; awaiting {
			return
		}
		dropped = len(hd.content.Databases)
		s.sess.defs.Store(awaitingDefs(hd.content.GameVersion, hd.content.Mods))
	})
	if err != nil {
		return 0, err
	}
	if awaiting {
		return 0, errors.New("no declaration to clear: the session awaits its arbiter's")
	}
	s.logAdmin(by, "clear declared defs", "databases", dropped)
	return dropped, nil
}

// awaitingDefs is the host's databases while it awaits its arbiter's
// declaration: none announced, none compared.
func awaitingDefs(gameVersion string, mods []string) *hostDefs {
	return &hostDefs{content: Content{GameVersion: gameVersion, Mods: mods}, hash: status.SummaryHash(nil), awaiting: true}
}

// relayDefsInit sets the session's databases for DefsFromArbiter: a new
// session awaits the declaration, announcing content's game version and
// mods; a resumed one takes content's databases, the save's, as the
// declaration it saved. Before the session runs.
func (s *session) relayDefsInit(content Content) error {
	if !s.cfg.Relay.DefsFromArbiter {
		return nil
	}
	if s.cfg.Relay.Resume != nil {
		s.defs.Store(declaredDefs(content.GameVersion, content.Mods, content.Databases))
		return nil
	}
	if len(content.Databases) > 0 {
		return errors.New("relay: DefsFromArbiter takes the def databases from the arbiter, and content has some")
	}
	s.defs.Store(awaitingDefs(content.GameVersion, content.Mods))
	return nil
}

// declaredDefs is the host's databases from a declaration: the refusal's
// detail is a manifest of the differing declared databases, each a
// summary without its defs, which is all a declaration says.
func declaredDefs(gameVersion string, mods []string, dbs []defs.Summary) *hostDefs {
	dbs = slices.Clone(dbs)
	slices.SortFunc(dbs, func(a, b defs.Summary) int { return strings.Compare(a.Type, b.Type) })
	m := &defs.Manifest{Schema: defs.ManifestSchema, GameVersion: gameVersion, Mods: make([]defs.ManifestMod, len(mods)),
		Databases: make([]defs.ManifestDatabase, len(dbs))}
	for i, id := range mods {
		m.Mods[i] = defs.ManifestMod{PackageID: id}
	}
	for i, d := range dbs {
		m.Databases[i] = defs.ManifestDatabase{Type: d.Type, Count: int(d.Count), Hash: defs.Hash64(d.Hash)}
	}
	c := Content{GameVersion: gameVersion, Mods: mods, Databases: dbs, Detail: func(types []string) []byte {
		d, err := defs.MarshalDetail(m.Only(types))
		if err != nil {
			return nil // a declaration the manifest cannot hold: no detail, the statuses say enough
		}
		return d
	}}
	return newHostDefs(c)
}

// keepDeclared keeps the client's Client_Defs, unchecked, for its
// admission while the session awaits its arbiter's declaration. A list
// that names a type twice declares no set of databases and is refused.
func (p *peer) keepDeclared(cd *wire.ClientDefs) error {
	seen := make(map[string]bool, len(cd.Databases))
	for _, d := range cd.Databases {
		if seen[d.Type] {
			return refuse(wire.ReasonGeneric, "The client declared def database %q twice.", d.Type)
		}
		seen[d.Type] = true
	}
	p.relay.declared = cd
	return nil
}

// defsRule checks, at admission, a joiner whose Client_Defs the
// handshake kept (unchecked, or checked against a declaration the
// operator may have cleared since) against the declaration that stands;
// it is refused as the handshake would have refused it. While the session
// still awaits the declaration nothing is checked here: the uploader's
// is taken (relayDeclare), and anyone else is refused by arbiterRule until
// the world is there.
func (rs *relaySession) defsRule(r joinReq) error {
	s := rs.sess
	if r.declared == nil {
		return nil
	}
	hd := s.defs.Load()
	if hd.awaiting {
		return nil
	}
	if d := defsRefusal(hd, r.declared); d != nil {
		s.cfg.Logger.Info("joiner's def databases do not match the arbiter's declaration", "name", r.name, "databases", len(r.declared.Databases))
		return &protocolError{disc: d}
	}
	return nil
}

// relayDeclare takes the Client_Defs of m, the arbiter admitted as the
// uploader of a new session's world, as the def databases every joiner
// must match, when the session awaits a declaration. Session goroutine.
func (s *session) relayDeclare(r joinReq, m *member) {
	hd := s.defs.Load()
	if !hd.awaiting || r.declared == nil {
		return
	}
	dbs := make([]defs.Summary, len(r.declared.Databases))
	for i, d := range r.declared.Databases {
		dbs[i] = defs.Summary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	next := declaredDefs(hd.content.GameVersion, hd.content.Mods, dbs)
	s.defs.Store(next)
	s.cfg.Logger.Info("def databases declared by the arbiter", "player", m.id, "name", m.name, "databases", len(dbs), "defs_hash", next.hash)
}

// saveMeta records a relay session's declared databases in the meta of
// its save, where a resumed session takes them from. It runs on the
// goroutine writing the save: the declaration is an atomic.
func (rs *relaySession) saveMeta(meta *saves.Meta) {
	s := rs.sess
	if !s.cfg.Relay.DefsFromArbiter {
		return
	}
	hd := s.defs.Load()
	meta.Databases = make([]saves.DefSummary, len(hd.content.Databases))
	for i, d := range hd.content.Databases {
		meta.Databases[i] = saves.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
}
