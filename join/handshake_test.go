package join_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/wire"
)

// TestRefusals: the host's Server_Disconnect at each step of a join
// reaches the caller as a *RejectedError with the host's reason, sentence,
// def statuses and detail, and never as a protocol error.
func TestRefusals(t *testing.T) {
	full := &wire.ServerDisconnect{Reason: wire.ReasonDefs, Message: "2 def databases differ",
		DefStatuses: []uint8{uint8(defs.StatusOK), uint8(defs.StatusCountDiff)}, Detail: []byte("manifest")}
	for _, tc := range []struct {
		name  string
		after wire.ID // the client packet the host refuses
		d     *wire.ServerDisconnect
	}{
		{"protocol", wire.IDClientProtocol, &wire.ServerDisconnect{Reason: wire.ReasonProtocol, Message: "the host is older"}},
		{"defs with detail", wire.IDClientDefs, full},
		{"bad password", wire.IDClientUsername, &wire.ServerDisconnect{Reason: wire.ReasonBadPassword, Message: "wrong password"}},
		{"server full, no sentence", wire.IDClientUsername, &wire.ServerDisconnect{Reason: wire.ReasonServerFull}},
		{"while downloading", wire.IDClientAck, &wire.ServerDisconnect{Reason: wire.ReasonTimeout, Message: "too slow"}},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				w := newWorld(t, 2, 0)
				_, script, err := run(t, tr, join.Config{}, func(h *fakeHost) error {
					answers := map[wire.ID]wire.Packet{wire.IDClientProtocol: greeting.modList, wire.IDClientDefs: greeting.defsOK}
					for {
						p, err := h.next()
						if err != nil {
							return err
						}
						if p.ID() == tc.after {
							return h.send(tc.d)
						}
						if p.ID() == wire.IDClientUsername {
							if err := h.send(&wire.ServerWorldData{Offset: 0, Total: uint64(len(w.payload)), Data: w.payload[:100]}); err != nil {
								return err
							}
						} else if err := h.send(answers[p.ID()]); err != nil {
							return err
						}
					}
				})
				scriptOK(t, script)
				var re *join.RejectedError
				if !errors.As(err, &re) {
					t.Fatalf("join: %v, want a *RejectedError", err)
				}
				if re.Reason != tc.d.Reason || !slices.Equal(re.Statuses, tc.d.DefStatuses) || !bytes.Equal(re.Detail, tc.d.Detail) {
					t.Fatalf("refusal %+v, host sent %+v", re, tc.d)
				}
				want := tc.d.Message
				if want == "" {
					want = tc.d.Reason.Sentence()
				}
				if re.Error() != want {
					t.Fatalf("error says %q, want %q", re.Error(), want)
				}
				var pe *join.ProtocolError
				if errors.As(err, &pe) {
					t.Fatalf("a refusal reads as a protocol error: %v", err)
				}
			})
		}
	}
}

// TestHandshakeSends: what the client says in the handshake carries the
// config: databases, name, spectating, token, and a password proof only
// when the host sent a challenge; every clock round is echoed at once;
// Info holds what the host announced.
func TestHandshakeSends(t *testing.T) {
	dbs := []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}, {Type: "TerrainDef", Count: 2, Hash: 0x1234}}
	for _, tc := range []struct {
		name      string
		challenge []byte
		cfg       join.Config
	}{
		{"plain", nil, join.Config{Name: "Alice"}},
		{"password", []byte("0123456789abcdef"), join.Config{Name: "Bob", Password: []byte("secret"), Databases: dbs}},
		{"password unasked", nil, join.Config{Name: "Bob", Password: []byte("secret")}},
		{"spectator with token", nil, join.Config{Name: "Eve", Spectate: true, Token: []byte("0123456789abcdef")}},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				w := newWorld(t, 2, 0)
				var got struct {
					proto *wire.ClientProtocol
					defs  *wire.ClientDefs
					user  *wire.ClientUsername
					nonce []uint32
				}
				s, script, err := run(t, tr, tc.cfg, func(h *fakeHost) error {
					p, err := h.expect(wire.IDClientProtocol)
					if err != nil {
						return err
					}
					got.proto = p.(*wire.ClientProtocol)
					ml := *greeting.modList
					ml.PasswordChallenge = tc.challenge
					if err := h.send(&ml); err != nil {
						return err
					}
					if p, err = h.expect(wire.IDClientDefs); err != nil {
						return err
					}
					got.defs = p.(*wire.ClientDefs)
					for _, n := range []uint32{11, 12, 13} {
						if err := h.send(&wire.ServerClock{Nonce: n, HostTime: time.Now().UnixMicro(), Attempt: uint8(n - 10)}); err != nil {
							return err
						}
						p, err := h.expect(wire.IDClientClock)
						if err != nil {
							return err
						}
						got.nonce = append(got.nonce, p.(*wire.ClientClock).Nonce)
					}
					if err := h.send(greeting.defsOK); err != nil {
						return err
					}
					if p, err = h.expect(wire.IDClientUsername); err != nil {
						return err
					}
					got.user = p.(*wire.ClientUsername)
					if err := h.sendWorld(w.payload, uint64(len(w.payload)), 4096); err != nil {
						return err
					}
					_, err = h.until(wire.IDClientWorldReady)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				scriptOK(t, script)
				if got.proto.Protocol != wire.ProtocolVersion {
					t.Errorf("announced protocol %d, want %d", got.proto.Protocol, wire.ProtocolVersion)
				}
				if len(got.defs.Databases) != len(tc.cfg.Databases) {
					t.Fatalf("sent %d databases, want %d", len(got.defs.Databases), len(tc.cfg.Databases))
				}
				for i, d := range tc.cfg.Databases {
					if g := got.defs.Databases[i]; g.Type != d.Type || g.Count != d.Count || g.Hash != d.Hash {
						t.Errorf("database %d sent as %+v, want %+v", i, g, d)
					}
				}
				if !slices.Equal(got.nonce, []uint32{11, 12, 13}) {
					t.Errorf("clock rounds answered with nonces %v, want 11 12 13", got.nonce)
				}
				u := got.user
				if u.Name != tc.cfg.Name || u.Spectate != tc.cfg.Spectate || !bytes.Equal(u.Token, tc.cfg.Token) {
					t.Errorf("username packet %+v for config name %q spectate %v token %q", u, tc.cfg.Name, tc.cfg.Spectate, tc.cfg.Token)
				}
				var wantProof []byte
				if tc.challenge != nil {
					wantProof = password.Proof(tc.cfg.Password, tc.challenge)
				}
				if !bytes.Equal(u.PasswordProof, wantProof) {
					t.Errorf("password proof %x, want %x", u.PasswordProof, wantProof)
				}
				if bytes.Contains(u.PasswordProof, []byte("secret")) {
					t.Error("the password crossed the wire")
				}
				info := s.Info()
				if info.GameVersion != "1.5" || !slices.Equal(info.Mods, greeting.modList.Mods) || info.GameName != "Fake colony" ||
					info.PlayerID != 7 || info.Faction != 3 {
					t.Errorf("info %+v does not hold what the host announced", info)
				}
			})
		}
	}
}

// TestProtocolOverride: jointest's protocol reaches the host, and the
// default is wire.ProtocolVersion.
func TestProtocolOverride(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, addr, ends := tr.start(t)
			ctx = jointest.With(ctx, jointest.Options{Protocol: wire.ProtocolVersion + 5})
			var sent uint32
			_, script, err := runCtx(t, ctx, addr, ends, join.Config{}, func(h *fakeHost) error {
				p, err := h.expect(wire.IDClientProtocol)
				if err != nil {
					return err
				}
				sent = p.(*wire.ClientProtocol).Protocol
				return h.send(&wire.ServerDisconnect{Reason: wire.ReasonProtocol, Message: "the host is older"})
			})
			scriptOK(t, script)
			if sent != wire.ProtocolVersion+5 {
				t.Fatalf("announced %d, want %d", sent, wire.ProtocolVersion+5)
			}
			var re *join.RejectedError
			if !errors.As(err, &re) || re.Reason != wire.ReasonProtocol {
				t.Fatalf("join: %v, want refused as Protocol", err)
			}
		})
	}
}

// TestBadPackets: a host that sends what the protocol does not allow
// gets a *ProtocolError naming the problem, at every step.
func TestBadPackets(t *testing.T) {
	w := newWorld(t, 2, 0)
	admitted := func(h *fakeHost) error { _, err := h.handshake(); return err }
	for _, tc := range []struct {
		name   string
		script func(h *fakeHost) error
		want   string
		proto  bool // a *ProtocolError
	}{
		{"wrong first packet", func(h *fakeHost) error {
			return h.send(greeting.defsOK)
		}, "expected Server_ModList", true},
		{"client packet from the host", func(h *fakeHost) error {
			return h.send(&wire.ClientAck{Received: 1})
		}, "host sent client packet", true},
		{"undecodable body", func(h *fakeHost) error {
			return h.raw(wire.AppendFrame(nil, wire.IDServerModList, []byte{0xc1, 0xc1}))
		}, "host protocol error", true},
		{"unknown packet ID", func(h *fakeHost) error {
			return h.raw(wire.AppendFrame(nil, wire.ID(0xf0), []byte{0x80}))
		}, "host protocol error", true},
		{"wrong answer to defs", func(h *fakeHost) error {
			if _, err := h.expect(wire.IDClientProtocol); err != nil {
				return err
			}
			if err := h.send(greeting.modList); err != nil {
				return err
			}
			return h.send(greeting.modList)
		}, "expected Server_DefsOK", true},
		{"frame over the limit", func(h *fakeHost) error {
			// Over a pipe the write fails as the client hangs up on the
			// frame's header; the client's error is what counts.
			_ = h.raw(wire.AppendFrame(nil, wire.IDServerModList, make([]byte, 2<<20)))
			return nil
		}, "frame exceeds size limit", false},
		{"handshake packet while downloading", func(h *fakeHost) error {
			if err := admitted(h); err != nil {
				return err
			}
			return h.send(greeting.defsOK)
		}, "unexpected Server_DefsOK while downloading", true},
		{"client packet while downloading", func(h *fakeHost) error {
			if err := admitted(h); err != nil {
				return err
			}
			return h.send(&wire.ClientWorldReady{})
		}, "host sent client packet", true},
		{"repair before ready", func(h *fakeHost) error {
			if err := admitted(h); err != nil {
				return err
			}
			return h.send(&wire.ServerResync{Tick: 5, Maps: []int32{0}})
		}, "unexpected Server_Resync", true},
		{"world data out of order", func(h *fakeHost) error {
			if err := admitted(h); err != nil {
				return err
			}
			return h.send(&wire.ServerWorldData{Offset: 100, Total: uint64(len(w.payload)), Data: w.payload[100:200]})
		}, "world data", true},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				_, script, err := run(t, tr, join.Config{}, func(h *fakeHost) error {
					if err := tc.script(h); err != nil {
						return err
					}
					return h.waitClosed()
				})
				scriptOK(t, script)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("join: %v, want an error saying %q", err, tc.want)
				}
				var pe *join.ProtocolError
				if errors.As(err, &pe) != tc.proto {
					t.Fatalf("join: %v (%T): protocol error %v, want %v", err, err, !tc.proto, tc.proto)
				}
				var re *join.RejectedError
				if errors.As(err, &re) {
					t.Fatalf("a bad packet reads as a refusal: %v", err)
				}
			})
		}
	}
}

// TestSilence: a host that says nothing is given up on after the phase's
// timeout, with a deadline error, during the handshake and the download.
func TestSilence(t *testing.T) {
	w := newWorld(t, 2, 0)
	for _, tc := range []struct {
		name   string
		cfg    join.Config
		script func(h *fakeHost) error
	}{
		{"before the mod list", join.Config{HandshakeTimeout: 200 * time.Millisecond}, func(h *fakeHost) error {
			_, err := h.expect(wire.IDClientProtocol)
			return err
		}},
		{"between clock rounds", join.Config{HandshakeTimeout: 200 * time.Millisecond}, func(h *fakeHost) error {
			if _, err := h.expect(wire.IDClientProtocol); err != nil {
				return err
			}
			if err := h.send(greeting.modList); err != nil {
				return err
			}
			return h.send(&wire.ServerClock{Nonce: 1})
		}},
		{"halfway through the world", join.Config{ReadyTimeout: 200 * time.Millisecond}, func(h *fakeHost) error {
			if _, err := h.handshake(); err != nil {
				return err
			}
			return h.sendWorld(w.payload[:len(w.payload)/2], uint64(len(w.payload)), 1000)
		}},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				_, script, err := run(t, tr, tc.cfg, func(h *fakeHost) error {
					if err := tc.script(h); err != nil {
						return err
					}
					return h.waitClosed()
				})
				scriptOK(t, script)
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("join: %v, want a deadline error", err)
				}
			})
		}
	}
}

// TestConfigAndDial: a config that cannot work is refused before
// dialling; a failed dial is wrapped with the address; cancelling the
// context ends a join stuck in the handshake with the context's error.
func TestConfigAndDial(t *testing.T) {
	dials := 0
	dialErr := errors.New("no route")
	refuse := func(context.Context, string) (net.Conn, error) {
		dials++
		return nil, dialErr
	}
	ctx := context.Background()
	for _, tc := range []struct {
		cfg  join.Config
		want string
	}{
		{join.Config{Name: "Alice", Loader: nil, Dial: refuse}, "no host address"},
		{join.Config{Addr: "h:1", Loader: nil, Dial: refuse}, "no username"},
		{join.Config{Addr: "h:1", Name: "Alice", Dial: refuse}, "no simulation loader"},
		{join.Config{Addr: "h:1", Name: "Alice", MaxFrame: 1024, Loader: nil, Dial: refuse}, "max frame too small"},
	} {
		if _, err := join.Join(ctx, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if dials != 0 {
		t.Fatalf("dialled %d times for configs that cannot work", dials)
	}
	_, err := join.Join(ctx, join.Config{Addr: "h:1", Name: "Alice", Loader: locksteptest.Load, Dial: refuse})
	if !errors.Is(err, dialErr) || !strings.Contains(err.Error(), "connect to h:1") {
		t.Fatalf("failed dial: %v", err)
	}

	for _, tr := range transports {
		t.Run("cancelled/"+tr.name, func(t *testing.T) {
			base, addr, ends := tr.start(t)
			ctx, cancel := context.WithCancel(base)
			_, script, err := runCtx(t, ctx, addr, ends, join.Config{}, func(h *fakeHost) error {
				if _, err := h.expect(wire.IDClientProtocol); err != nil {
					return err
				}
				cancel()
				return h.waitClosed()
			})
			scriptOK(t, script)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("join: %v, want context.Canceled", err)
			}
		})
	}
}
