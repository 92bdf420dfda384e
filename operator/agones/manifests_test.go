package agones

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/testing/agonestest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// manifestsDir holds the Agones manifests of the repository.
const manifestsDir = "../../deploy/agones"

// yamlDocs reads every document of a YAML file, as JSON values.
func yamlDocs(t *testing.T, path string) []any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []any
	dec := yaml.NewDecoder(f)
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v != nil {
			docs = append(docs, asJSON(t, v))
		}
	}
}

// asJSON turns a decoded YAML value into what encoding/json would give.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// get follows keys (strings for maps, ints for lists) into v.
func get(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// crdSchemas compiles the schema of each served version of each Agones CRD,
// by "group/version Kind".
func crdSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, crd := range yamlDocs(t, agonestest.SharedFile(t, "crds.yaml")) {
		if get(crd, "kind") != "CustomResourceDefinition" {
			continue
		}
		group, _ := get(crd, "spec", "group").(string)
		kind, _ := get(crd, "spec", "names", "kind").(string)
		versions, _ := get(crd, "spec", "versions").([]any)
		for _, v := range versions {
			name, _ := get(v, "name").(string)
			key := fmt.Sprintf("%s/%s %s", group, name, kind)
			out[key] = compileSchema(t, key, get(v, "schema", "openAPIV3Schema"))
		}
	}
	if len(out) < 4 {
		t.Fatalf("only %d CRD schemas in crds.yaml", len(out))
	}
	return out
}

// compileSchema compiles a Kubernetes OpenAPI v3 schema: draft 4 reads its
// boolean exclusiveMinimum, and the x-kubernetes- keywords are ignored.
func compileSchema(t *testing.T, name string, schema any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	url := "mem:///" + strings.NewReplacer("/", "_", " ", "_").Replace(name) + ".json"
	if err := c.AddResource(url, schema); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// allocationSchema is what this test checks of a GameServerAllocation,
// which is served by Agones' API server, not a CRD, so crds.yaml has no
// schema of it: the fields the repository's example uses, from Agones'
// allocation API (selectors with labels, state and List filters).
const allocationSchema = `{
  "type": "object",
  "required": ["apiVersion", "kind", "spec"],
  "properties": {
    "apiVersion": {"enum": ["allocation.agones.dev/v1"]},
    "spec": {
      "type": "object",
      "required": ["selectors"],
      "additionalProperties": false,
      "properties": {
        "scheduling": {"enum": ["Packed", "Distributed"]},
        "selectors": {
          "type": "array", "minItems": 1,
          "items": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
              "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
              "gameServerState": {"enum": ["Ready", "Allocated"]},
              "lists": {"type": "object", "additionalProperties": {
                "type": "object", "additionalProperties": false,
                "properties": {
                  "containsValue": {"type": "string"},
                  "minAvailable": {"type": "integer", "minimum": 0},
                  "maxAvailable": {"type": "integer", "minimum": 0}
                }
              }}
            }
          }
        }
      }
    }
  }
}`

// manifest is one document of a file under deploy/agones.
type manifest struct {
	file string
	doc  any
}

func (m manifest) key() string {
	return fmt.Sprintf("%v %v", get(m.doc, "apiVersion"), get(m.doc, "kind"))
}

func manifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", manifestsDir, err)
	}
	var out []manifest
	for _, f := range files {
		for _, d := range yamlDocs(t, f) {
			out = append(out, manifest{filepath.Base(f), d})
		}
	}
	return out
}

// validator checks manifests: Agones' CRD kinds against crds.yaml, a
// GameServerAllocation against allocationSchema.
type validator struct {
	crds  map[string]*jsonschema.Schema
	alloc *jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(allocationSchema))
	if err != nil {
		t.Fatal(err)
	}
	return &validator{crds: crdSchemas(t), alloc: compileSchema(t, "allocation", doc)}
}

// validate checks m; checked is false for a kind that is no Agones kind.
func (v *validator) validate(m manifest) (checked bool, err error) {
	key := m.key()
	if s := v.crds[key]; s != nil {
		return true, s.Validate(m.doc)
	}
	if key == "allocation.agones.dev/v1 GameServerAllocation" {
		return true, v.alloc.Validate(m.doc)
	}
	if strings.Contains(key, "agones.dev") {
		return true, fmt.Errorf("%s: no schema of this Agones kind", key)
	}
	return false, nil
}

// TestManifestsValidate checks every manifest under deploy/agones against
// the Agones CRD schemas (the allocation against the fields it may use),
// and that the allocation selects only on labels the host sets.
func TestManifestsValidate(t *testing.T) {
	v := newValidator(t)
	kinds := map[string]bool{}
	for _, m := range manifests(t) {
		checked, err := v.validate(m)
		if err != nil {
			t.Errorf("%s (%s): %v", m.file, m.key(), err)
		}
		if checked {
			kinds[get(m.doc, "kind").(string)] = true
		} else {
			t.Logf("%s (%s): not an Agones kind, not checked", m.file, m.key())
		}
	}
	for _, k := range []string{"GameServer", "Fleet", "FleetAutoscaler", "GameServerAllocation"} {
		if !kinds[k] {
			t.Errorf("no %s checked under %s", k, manifestsDir)
		}
	}
	labels, _ := Facts{Game: "g", Fingerprint: "sha256:00"}.Metadata()
	for _, m := range manifests(t) {
		sels, _ := get(m.doc, "spec", "selectors").([]any)
		for _, sel := range sels {
			ml, _ := get(sel, "matchLabels").(map[string]any)
			for k := range ml {
				name, ok := strings.CutPrefix(k, "agones.dev/sdk-")
				if ok && labels[name] == "" {
					t.Errorf("%s selects on %s, a label the host never sets", m.file, k)
				}
			}
		}
	}
}

// TestManifestValidatorRefusesBroken breaks one field of each kind and
// checks that the validator refuses it, so a passing validation means
// something.
func TestManifestValidatorRefusesBroken(t *testing.T) {
	v := newValidator(t)
	byKind := map[string]manifest{}
	for _, m := range manifests(t) {
		byKind[get(m.doc, "kind").(string)] = m
	}
	for _, c := range []struct {
		kind, what string
		breakIt    func(doc any)
	}{
		{"GameServer", "port protocol SCTP", func(d any) { get(d, "spec", "ports", 0).(map[string]any)["protocol"] = "SCTP" }},
		{"GameServer", "no pod template", func(d any) { delete(get(d, "spec").(map[string]any), "template") }},
		{"GameServer", "players List capacity 5000", func(d any) { get(d, "spec", "lists", "players").(map[string]any)["capacity"] = 5000 }},
		{"GameServer", "container without a name", func(d any) {
			delete(get(d, "spec", "template", "spec", "containers", 0).(map[string]any), "name")
		}},
		{"Fleet", "health period -1", func(d any) {
			get(d, "spec", "template", "spec", "health").(map[string]any)["periodSeconds"] = -1
		}},
		{"FleetAutoscaler", "policy type Bogus", func(d any) { get(d, "spec", "policy").(map[string]any)["type"] = "Bogus" }},
		{"FleetAutoscaler", "maxReplicas 0", func(d any) { get(d, "spec", "policy", "buffer").(map[string]any)["maxReplicas"] = 0 }},
		{"GameServerAllocation", "state Shutdown", func(d any) {
			get(d, "spec", "selectors", 0).(map[string]any)["gameServerState"] = "Shutdown"
		}},
		{"GameServerAllocation", "misspelt minAvailable", func(d any) {
			get(d, "spec", "selectors", 0, "lists", "players").(map[string]any)["minAvaliable"] = 1
		}},
	} {
		m, ok := byKind[c.kind]
		if !ok {
			t.Fatalf("no %s manifest", c.kind)
		}
		broken := manifest{m.file, asJSON(t, m.doc)} // a deep copy
		c.breakIt(broken.doc)
		_, err := v.validate(broken)
		t.Logf("%s with %s: %v", c.kind, c.what, firstLine(err))
		if err == nil {
			t.Errorf("%s with %s: validated, want refused", c.kind, c.what)
		}
	}
}

// firstLine is the start of err's message, for the test's log.
func firstLine(err error) string {
	if err == nil {
		return "accepted"
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	return s[:min(len(s), 160)]
}
