package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fileHeader is the first line of a seed file in Go's fuzzing corpus format.
const fileHeader = "go test fuzz v1"

// RecordedPrefix starts the name of every seed file the recorder writes.
// Files without it (such as the failing inputs Go saves while fuzzing) are
// never removed or rewritten by the recorder.
const RecordedPrefix = "rec-"

var recordedName = regexp.MustCompile(`^` + RecordedPrefix + `[0-9a-f]{16}$`)

// IsRecorded reports whether a seed file name is one the recorder writes.
func IsRecorded(name string) bool { return recordedName.MatchString(name) }

// FileName is the name of a recorded seed file with the given contents:
// RecordedPrefix and the first 16 hex digits of its SHA-256, so the same
// seed always gets the same name.
func FileName(data []byte) string {
	sum := sha256.Sum256(data)
	return RecordedPrefix + hex.EncodeToString(sum[:8])
}

// Marshal encodes one fuzz input, its arguments in the order of the
// target's function, as a seed file. It supports the argument types the
// repository's targets take: []byte, string, byte, bool and the integer
// types.
func Marshal(args ...any) ([]byte, error) {
	if len(args) == 0 {
		return nil, errors.New("marshal seed: no arguments")
	}
	var b bytes.Buffer
	b.WriteString(fileHeader + "\n")
	for i, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		case int32:
			// Written as a number: not every int32 is a valid rune.
			fmt.Fprintf(&b, "int32(%d)\n", v)
		case bool, int, int8, int16, int64, uint, uint16, uint32, uint64:
			fmt.Fprintf(&b, "%T(%v)\n", v, v)
		default:
			return nil, fmt.Errorf("marshal seed: argument %d has unsupported type %T", i, a)
		}
	}
	return b.Bytes(), nil
}

// Unmarshal decodes a seed file into its arguments. It reads every form Go
// writes for the supported types, including rune literals for int32 and
// numeric literals for byte.
func Unmarshal(data []byte) ([]any, error) {
	lines := strings.Split(string(data), "\n")
	if strings.TrimSuffix(lines[0], "\r") != fileHeader {
		return nil, fmt.Errorf("unmarshal seed: first line %.40q is not %q", lines[0], fileHeader)
	}
	var args []any
	for n, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("unmarshal seed: line %d: %w", n+2, err)
		}
		args = append(args, v)
	}
	if len(args) == 0 {
		return nil, errors.New("unmarshal seed: no values")
	}
	return args, nil
}

// parseValue reads one line such as []byte("..."), uint16(7) or int32(-1).
func parseValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, fmt.Errorf("parse %.40q: %w", line, err)
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%.40q is not a conversion of one value", line)
	}
	if at, ok := call.Fun.(*ast.ArrayType); ok {
		if id, ok := at.Elt.(*ast.Ident); !ok || at.Len != nil || (id.Name != "byte" && id.Name != "uint8") {
			return nil, fmt.Errorf("%.40q: only []byte slices are supported", line)
		}
		s, err := stringLit(call.Args[0])
		if err != nil {
			return nil, err
		}
		return []byte(s), nil
	}
	fn, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("%.40q: unsupported type", line)
	}
	arg := call.Args[0]
	switch fn.Name {
	case "string":
		return stringLit(arg)
	case "bool":
		id, ok := arg.(*ast.Ident)
		if !ok || (id.Name != "true" && id.Name != "false") {
			return nil, fmt.Errorf("%.40q: want true or false", line)
		}
		return id.Name == "true", nil
	}
	text, kind, err := numberLit(arg)
	if err != nil {
		return nil, fmt.Errorf("%.40q: %w", line, err)
	}
	if kind == token.CHAR {
		r, _, _, err := strconv.UnquoteChar(text[1:len(text)-1], '\'')
		if err != nil {
			return nil, fmt.Errorf("%.40q: %w", line, err)
		}
		text = strconv.Itoa(int(r))
	}
	switch fn.Name {
	case "byte", "uint8":
		v, err := strconv.ParseUint(text, 0, 8)
		return uint8(v), err
	case "uint16":
		v, err := strconv.ParseUint(text, 0, 16)
		return uint16(v), err
	case "uint32":
		v, err := strconv.ParseUint(text, 0, 32)
		return uint32(v), err
	case "uint64":
		return strconv.ParseUint(text, 0, 64)
	case "uint":
		v, err := strconv.ParseUint(text, 0, 64)
		return uint(v), err
	case "int8":
		v, err := strconv.ParseInt(text, 0, 8)
		return int8(v), err
	case "int16":
		v, err := strconv.ParseInt(text, 0, 16)
		return int16(v), err
	case "int32", "rune":
		v, err := strconv.ParseInt(text, 0, 32)
		return int32(v), err
	case "int64":
		return strconv.ParseInt(text, 0, 64)
	case "int":
		v, err := strconv.ParseInt(text, 0, 64)
		return int(v), err
	}
	return nil, fmt.Errorf("%.40q: unsupported type %s", line, fn.Name)
}

func stringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", errors.New("want a string literal")
	}
	return strconv.Unquote(lit.Value)
}

// numberLit returns the text of an integer or character literal, with its
// sign.
func numberLit(e ast.Expr) (string, token.Token, error) {
	sign := ""
	if u, ok := e.(*ast.UnaryExpr); ok && (u.Op == token.SUB || u.Op == token.ADD) {
		sign, e = u.Op.String(), u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || (lit.Kind != token.INT && lit.Kind != token.CHAR) || (sign != "" && lit.Kind == token.CHAR) {
		return "", 0, errors.New("want an integer or character literal")
	}
	return sign + lit.Value, lit.Kind, nil
}

// WriteDir makes dir hold exactly the given recorded seed files, each
// named by FileName: recorded files not among them are removed, and every
// other file is left alone. It returns how many files it wrote and
// removed.
func WriteDir(dir string, files [][]byte) (written, removed int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, fmt.Errorf("corpus folder: %w", err)
	}
	want := make(map[string][]byte, len(files))
	for _, f := range files {
		want[FileName(f)] = f
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, fmt.Errorf("corpus folder: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !IsRecorded(e.Name()) {
			continue
		}
		if _, keep := want[e.Name()]; keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return written, removed, fmt.Errorf("remove stale seed: %w", err)
		}
		removed++
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, want[name]) {
			continue
		}
		if err := os.WriteFile(p, want[name], 0o644); err != nil {
			return written, removed, fmt.Errorf("write seed: %w", err)
		}
		written++
	}
	return written, removed, nil
}
