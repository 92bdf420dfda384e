package corpus

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
)

// Target is one fuzz target the recorder writes seeds for.
type Target struct {
	// Pkg is the target's package folder from the module root.
	Pkg string
	// Name is the fuzz function's name.
	Name string
	// Args are the Go types of the fuzz function's arguments after
	// *testing.T, as written in its source.
	Args []string
	// seeds makes the target's seeds from a recording.
	seeds func(a *Analysis) [][]any
	// check, if set, tells whether a recorded seed is a valid input: real
	// traffic must be accepted where the target expects valid input.
	check func(args []any) error
}

// Dir is the target's seed corpus folder under the module root.
func (t Target) Dir(root string) string {
	return filepath.Join(root, filepath.FromSlash(t.Pkg), "testdata", "fuzz", t.Name)
}

// String is the target as "pkg.Name".
func (t Target) String() string { return t.Pkg + "." + t.Name }

// Types are the reflect types of Args.
func (t Target) Types() ([]reflect.Type, error) {
	out := make([]reflect.Type, len(t.Args))
	for i, a := range t.Args {
		typ, ok := argTypes[a]
		if !ok {
			return nil, fmt.Errorf("%s: unsupported argument type %s", t, a)
		}
		out[i] = typ
	}
	return out, nil
}

var argTypes = map[string]reflect.Type{
	"[]byte": reflect.TypeFor[[]byte](),
	"byte":   reflect.TypeFor[byte](),
	"string": reflect.TypeFor[string](),
	"int32":  reflect.TypeFor[int32](),
	"uint16": reflect.TypeFor[uint16](),
}

// Seeds makes the target's seeds from a recording, each once.
func (t Target) Seeds(a *Analysis) ([][]byte, error) {
	var out [][]byte
	seen := map[string]bool{}
	for _, args := range t.seeds(a) {
		b, err := Marshal(args...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, b)
		}
	}
	return out, nil
}

// Check tells whether a recorded seed's arguments are a valid input of
// the target.
func (t Target) Check(args []any) error {
	types, err := t.Types()
	if err != nil {
		return err
	}
	if len(args) != len(types) {
		return fmt.Errorf("%d arguments, %s takes %d", len(args), t, len(types))
	}
	for i, a := range args {
		if reflect.TypeOf(a) != types[i] {
			return fmt.Errorf("argument %d is %T, %s takes %s", i, a, t, t.Args[i])
		}
	}
	if t.check == nil {
		return nil
	}
	return t.check(args)
}

// Targets are the repository's fuzz targets and how the recorder seeds
// them.
func Targets() []Target {
	return append(trafficTargets(), fileTargets()...)
}

// trafficTargets are the targets whose seeds come from what crossed the
// connections: frames, packets, world payloads and commands.
func trafficTargets() []Target {
	return []Target{
		{Pkg: "wire", Name: "FuzzFrameReader", Args: []string{"[]byte"},
			seeds: (*Analysis).frameReaderSeeds,
			check: func(args []any) error {
				if len(Frames(args[0].([]byte))) == 0 {
					return errors.New("no whole frame")
				}
				return nil
			}},
		{Pkg: "wire", Name: "FuzzDecode", Args: []string{"byte", "[]byte"},
			seeds: (*Analysis).decodeSeeds,
			check: func(args []any) error {
				id := wire.ID(args[0].(byte))
				p, err := wire.Decode(id, args[1].([]byte))
				if err != nil {
					return err
				}
				if p.ID() != id {
					return fmt.Errorf("decoded %s from %s", p.ID(), id)
				}
				return nil
			}},
		{Pkg: "wire", Name: "FuzzReplayDecode", Args: []string{"[]byte"},
			seeds: (*Analysis).replaySeeds,
			check: func(args []any) error {
				_, _, err := wire.DecodeReplay(args[0].([]byte))
				return err
			}},
		{Pkg: "snapshot", Name: "FuzzParse", Args: []string{"[]byte"},
			seeds: (*Analysis).parseSeeds,
			check: func(args []any) error {
				_, err := snapshot.Parse(args[0].([]byte))
				return err
			}},
		{Pkg: "snapshot", Name: "FuzzReceiver", Args: []string{"[]byte"},
			seeds: (*Analysis).receiverSeeds,
			check: func(args []any) error {
				ops := args[0].([]byte)
				if len(ops) == 0 || len(ops)%2 != 0 {
					return fmt.Errorf("%d bytes of operations: want pairs", len(ops))
				}
				for i := 0; i < len(ops); i += 2 {
					if ops[i]%8 >= 5 {
						return fmt.Errorf("operation %d corrupts the chunk (mode %d)", i/2, ops[i])
					}
				}
				return nil
			}},
		{Pkg: "game/colony", Name: "FuzzLoad", Args: []string{"[]byte", "[]byte", "[]byte"},
			seeds: (*Analysis).loadSeeds,
			check: func(args []any) error {
				c, err := defaultContent()
				if err != nil {
					return err
				}
				_, err = colony.Load(c, args[0].([]byte), []lockstep.MapBlob{{ID: 0, Data: args[1].([]byte)}, {ID: 1, Data: args[2].([]byte)}})
				return err
			}},
		{Pkg: "game/colony", Name: "FuzzApply", Args: []string{"uint16", "int32", "[]byte"},
			seeds: (*Analysis).applySeeds},
		{Pkg: "game/colony", Name: "FuzzReplaceMap", Args: []string{"int32", "[]byte"},
			seeds: (*Analysis).replaceMapSeeds,
			check: func(args []any) error {
				c, err := defaultContent()
				if err != nil {
					return err
				}
				w, err := colony.New(c, colony.Config{Maps: 2, Width: 16, Height: 12, Seed: 5, PawnsPerMap: 2, ThingsPerMap: 10})
				if err != nil {
					return err
				}
				return w.ReplaceMap(lockstep.MapBlob{ID: args[0].(int32), Data: args[1].([]byte)})
			}},
	}
}

// fileTargets are the targets whose seeds are files and datagrams: the
// save, desync reports, status datagrams, the known hosts file, def files
// and manifests.
func fileTargets() []Target {
	return []Target{
		{Pkg: "saves", Name: "FuzzRead", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(a.rec.Save) },
			check: func(args []any) error {
				_, err := readSave(args[0].([]byte))
				return err
			}},
		{Pkg: "desync", Name: "FuzzRead", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(a.rec.DesyncReports...) },
			check: func(args []any) error {
				return withFile(args[0].([]byte), func(p string) error {
					_, err := desync.Read(p)
					return err
				})
			}},
		{Pkg: "status", Name: "FuzzDecodeReply", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(a.rec.StatusReplies...) },
			check: func(args []any) error {
				_, _, err := status.DecodeReply(args[0].([]byte))
				return err
			}},
		{Pkg: "status", Name: "FuzzRequest", Args: []string{"[]byte", "string", "string", "int32"},
			seeds: (*Analysis).requestSeeds,
			check: func(args []any) error {
				if _, _, ok := status.ParseRequestVersion(args[0].([]byte)); !ok {
					return errors.New("not a status request of a version the host answers")
				}
				return nil
			}},
		{Pkg: "tlsid", Name: "FuzzParseKnownHosts", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(a.rec.KnownHosts) },
			check: func(args []any) error {
				return withFile(args[0].([]byte), func(p string) error {
					_, _, err := (&tlsid.KnownHosts{Path: p}).Lookup("example.com:1")
					return err
				})
			}},
		{Pkg: "defs", Name: "FuzzParseDefXML", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(a.rec.DefFiles...) },
			check: func(args []any) error { return wellFormed(args[0].([]byte)) }},
		{Pkg: "defs", Name: "FuzzReadManifest", Args: []string{"[]byte"},
			seeds: func(a *Analysis) [][]any { return single(append(a.rec.Manifests, a.details...)...) },
			check: func(args []any) error {
				_, err := defs.ReadManifest(bytes.NewReader(args[0].([]byte)))
				return err
			}},
	}
}

// defaultContent is the embedded content, loaded once.
var defaultContent = sync.OnceValues(func() (*colony.Content, error) {
	c, _, err := colony.DefaultContent()
	return c, err
})

// wellFormed checks that b is one well-formed XML document (after an
// optional byte-order mark).
func wellFormed(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))))
	roots := 0
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		return fmt.Errorf("%d root elements", roots)
	}
	return nil
}

// withFile writes b to a temporary file and calls fn with its path.
func withFile(b []byte, fn func(path string) error) error {
	dir, err := os.MkdirTemp("", "lockhost-corpus-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "seed")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	return fn(p)
}
