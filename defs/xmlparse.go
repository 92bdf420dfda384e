package defs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file holds a small, strict XML parser for def files. It accepts the
// subset of XML 1.0 that def files use (elements, attributes, character
// data, CDATA sections, comments, processing instructions, a DOCTYPE
// without entity declarations, the five predefined entities and character
// references) and builds a Node tree directly, which is several times
// faster than encoding/xml.

const (
	maxDepth    = 256      // deepest element nesting accepted
	maxFileSize = 64 << 20 // largest def file accepted
)

// syntaxError is an XML error with the line it was found on.
type syntaxError struct {
	Line int
	Msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

type xmlParser struct {
	data  []byte
	src   string // data as a string: clean text and values are substrings of it
	pos   int
	line  int
	names map[string]string // interned element and attribute names
	text  []byte            // scratch for decoded character data
	slab  []Node            // nodes are allocated from here in blocks
	kids  []*Node           // children of the open elements, stacked
	stack []openElem        // the open elements, innermost last
	root  *Node             // the root element, once its start tag is read
	// transcoded is set when data was decoded from the encoding the
	// XML declaration names, which is then not checked again.
	transcoded bool
}

// openElem is the parse state of one element whose end tag is pending.
type openElem struct {
	n         *Node
	kidsStart int    // where its children start in xmlParser.kids
	buf       []byte // all character data so far, decoded
	nonWS     int    // number of chunks that were not only white space
	cleanLo   int    // range in src of the only non-white-space chunk,
	cleanHi   int    // when it needed no decoding (else cleanLo < 0)
}

// newNode allocates a node from the slab.
func (p *xmlParser) newNode() *Node {
	if len(p.slab) == 0 {
		p.slab = make([]Node, 64)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// addText records one chunk of character data [lo,hi) of the source for
// element e; raw chunks need entity decoding, CDATA chunks do not.
func (p *xmlParser) addText(e *openElem, lo, hi int, raw bool) error {
	chunk := p.data[lo:hi]
	if allSpace(chunk) {
		e.buf = append(e.buf, chunk...)
		return nil
	}
	e.nonWS++
	hasCR := bytes.IndexByte(chunk, '\r') >= 0
	if e.nonWS == 1 && !hasCR && (!raw || bytes.IndexByte(chunk, '&') < 0) {
		e.cleanLo, e.cleanHi = lo, hi
	} else {
		e.cleanLo = -1
	}
	if !raw {
		if hasCR {
			chunk = bytes.ReplaceAll(bytes.ReplaceAll(chunk, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		}
		e.buf = append(e.buf, chunk...)
		return nil
	}
	var err error
	e.buf, err = p.appendText(e.buf, chunk)
	return err
}

// finishText sets the element's trimmed text.
func (p *xmlParser) finishText(e *openElem) {
	switch {
	case e.nonWS == 0:
		e.n.Text = ""
	case e.nonWS == 1 && e.cleanLo >= 0:
		e.n.Text = strings.Trim(p.src[e.cleanLo:e.cleanHi], " \t\r\n")
	default:
		e.n.Text = textString(e.buf)
	}
}

// parseXML parses a whole document and returns its root element. It takes
// ownership of data: strings in the returned tree share its memory, so the
// caller must not modify data afterwards.
func parseXML(data []byte) (*Node, error) {
	if len(data) > maxFileSize {
		return nil, &syntaxError{Line: 1, Msg: fmt.Sprintf("file larger than %d bytes", maxFileSize)}
	}
	data, transcoded, err := toUTF8(data)
	if err != nil {
		return nil, &syntaxError{Line: 1, Msg: err.Error()}
	}
	if len(data) == 0 {
		return nil, &syntaxError{Line: 1, Msg: "no root element"}
	}
	if !utf8.Valid(data) {
		return nil, &syntaxError{Line: 1 + bytes.Count(data[:invalidUTF8At(data)], []byte{'\n'}), Msg: "invalid UTF-8"}
	}
	// The caller hands data over, so text can point into it without a
	// copy; it is never modified.
	src := unsafe.String(unsafe.SliceData(data), len(data))
	p := &xmlParser{data: data, src: src, line: 1, names: make(map[string]string, 64), transcoded: transcoded}
	return p.document()
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func (p *xmlParser) errf(format string, args ...any) error {
	return &syntaxError{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

// advance moves to position to, counting newlines.
func (p *xmlParser) advance(to int) {
	p.line += bytes.Count(p.data[p.pos:to], []byte{'\n'})
	p.pos = to
}

func (p *xmlParser) hasPrefix(s string) bool {
	return len(p.data)-p.pos >= len(s) && string(p.data[p.pos:p.pos+len(s)]) == s
}

// skipPast moves past the next occurrence of end, or fails with what.
func (p *xmlParser) skipPast(end, what string) error {
	i := bytes.Index(p.data[p.pos:], []byte(end))
	if i < 0 {
		return p.errf("unterminated %s", what)
	}
	p.advance(p.pos + i + len(end))
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *xmlParser) skipSpace() {
	i := p.pos
	for i < len(p.data) && isSpace(p.data[i]) {
		i++
	}
	p.advance(i)
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= 0x80
}

func isNameByte(c byte) bool {
	return isNameStart(c) || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func (p *xmlParser) name() (string, error) {
	i := p.pos
	if i >= len(p.data) || !isNameStart(p.data[i]) {
		return "", p.errf("expected a name")
	}
	for i < len(p.data) && isNameByte(p.data[i]) {
		i++
	}
	b := p.data[p.pos:i]
	p.pos = i
	if s, ok := p.names[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	p.names[s] = s
	return s, nil
}

// document parses the whole input and returns its root element.
func (p *xmlParser) document() (*Node, error) {
	for p.pos < len(p.data) {
		var err error
		if p.data[p.pos] != '<' {
			err = p.charData()
		} else {
			err = p.markup()
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.stack) > 0 {
		n := p.stack[len(p.stack)-1].n
		return nil, p.errf("unexpected end of file: element <%s> (line %d) is not closed", n.Name, n.Line)
	}
	if p.root == nil {
		return nil, p.errf("no root element")
	}
	return p.root, nil
}

// charData reads character data up to the next '<' (or the end) and adds
// it to the open element; outside the root only white space may appear.
func (p *xmlParser) charData() error {
	end := bytes.IndexByte(p.data[p.pos:], '<')
	if end < 0 {
		end = len(p.data)
	} else {
		end += p.pos
	}
	if len(p.stack) == 0 {
		if !allSpace(p.data[p.pos:end]) {
			return p.errf("text outside the root element")
		}
	} else if err := p.addText(&p.stack[len(p.stack)-1], p.pos, end, true); err != nil {
		return p.errf("%v", err)
	}
	p.advance(end)
	return nil
}

// markup reads the construct that starts with '<' at the current
// position: a processing instruction, comment, CDATA section, DOCTYPE, end
// tag or start tag.
func (p *xmlParser) markup() error {
	switch {
	case p.hasPrefix("<?"):
		return p.procInst()
	case p.hasPrefix("<!--"):
		p.pos += 4
		return p.skipPast("-->", "comment")
	case p.hasPrefix("<![CDATA["):
		return p.cdata()
	case p.hasPrefix("<!DOCTYPE"):
		if p.root != nil || len(p.stack) > 0 {
			return p.errf("DOCTYPE after the root element")
		}
		return p.doctype()
	case p.hasPrefix("</"):
		return p.endTag()
	default:
		return p.element()
	}
}

// cdata reads a CDATA section into the open element's text.
func (p *xmlParser) cdata() error {
	if len(p.stack) == 0 {
		return p.errf("CDATA outside the root element")
	}
	p.pos += 9
	i := bytes.Index(p.data[p.pos:], []byte("]]>"))
	if i < 0 {
		return p.errf("unterminated CDATA section")
	}
	_ = p.addText(&p.stack[len(p.stack)-1], p.pos, p.pos+i, false)
	p.advance(p.pos + i + 3)
	return nil
}

// endTag reads an end tag and closes the open element it must match,
// setting that element's text and children.
func (p *xmlParser) endTag() error {
	line := p.line
	p.pos += 2
	i := p.pos
	if i >= len(p.data) || !isNameStart(p.data[i]) {
		return p.errf("expected a name after </")
	}
	for i < len(p.data) && isNameByte(p.data[i]) {
		i++
	}
	name := p.src[p.pos:i] // not interned: only compared
	p.pos = i
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '>' {
		return p.errf("expected '>' after </%s", name)
	}
	p.pos++
	if len(p.stack) == 0 {
		return &syntaxError{Line: line, Msg: fmt.Sprintf("unexpected end tag </%s>", name)}
	}
	e := &p.stack[len(p.stack)-1]
	if e.n.Name != name {
		return &syntaxError{Line: line, Msg: fmt.Sprintf("element <%s> (line %d) closed by </%s>", e.n.Name, e.n.Line, name)}
	}
	p.finishText(e)
	if len(p.kids) > e.kidsStart {
		e.n.Children = slices.Clone(p.kids[e.kidsStart:])
		p.kids = p.kids[:e.kidsStart]
	}
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// element reads a start tag: the new element becomes the root or a child
// of the open element, and stays open unless the tag closes itself.
func (p *xmlParser) element() error {
	if p.root != nil && len(p.stack) == 0 {
		return p.errf("more than one root element")
	}
	if len(p.stack) >= maxDepth {
		return p.errf("elements nested deeper than %d", maxDepth)
	}
	n, selfClose, err := p.startTag()
	if err != nil {
		return err
	}
	if len(p.stack) == 0 {
		p.root = n
	} else {
		p.kids = append(p.kids, n)
	}
	if selfClose {
		return nil
	}
	if len(p.stack) < cap(p.stack) {
		// Reuse the text buffer of the element that last used this level.
		p.stack = p.stack[:len(p.stack)+1]
		e := &p.stack[len(p.stack)-1]
		*e = openElem{n: n, kidsStart: len(p.kids), buf: e.buf[:0]}
	} else {
		p.stack = append(p.stack, openElem{n: n, kidsStart: len(p.kids)})
	}
	return nil
}

func allSpace(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// textString trims XML white space and returns the text as a string.
func textString(b []byte) string {
	b = bytes.Trim(b, " \t\r\n")
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

func (p *xmlParser) procInst() error {
	start := p.pos
	p.pos += 2
	if err := p.skipPast("?>", "processing instruction"); err != nil {
		return err
	}
	body := p.data[start+2 : p.pos-2]
	if !p.transcoded && len(body) >= 3 && strings.EqualFold(string(body[:3]), "xml") && (len(body) == 3 || isSpace(body[3])) {
		if i := bytes.Index(body, []byte("encoding")); i >= 0 {
			rest := bytes.TrimLeft(body[i+len("encoding"):], " \t\r\n")
			if len(rest) > 0 && rest[0] == '=' {
				rest = bytes.TrimLeft(rest[1:], " \t\r\n")
				if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
					if j := bytes.IndexByte(rest[1:], rest[0]); j >= 0 {
						enc := strings.ToLower(string(rest[1 : 1+j]))
						if enc != "utf-8" && enc != "utf8" && enc != "us-ascii" && enc != "ascii" {
							return p.errf("unsupported encoding %q (only UTF-8 is supported)", enc)
						}
					}
				}
			}
		}
	}
	return nil
}

// doctype skips a DOCTYPE declaration including an internal subset.
func (p *xmlParser) doctype() error {
	depth := 0
	for i := p.pos; i < len(p.data); i++ {
		switch p.data[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '>':
			if depth <= 0 {
				p.advance(i + 1)
				return nil
			}
		}
	}
	return p.errf("unterminated DOCTYPE")
}

// startTag parses "<name attr='v' ...>" or "<name .../>".
func (p *xmlParser) startTag() (*Node, bool, error) {
	n := p.newNode()
	n.Line = p.line
	p.pos++ // '<'
	name, err := p.name()
	if err != nil {
		return nil, false, err
	}
	n.Name = name
	for {
		hadSpace := p.pos < len(p.data) && isSpace(p.data[p.pos])
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, false, p.errf("unexpected end of file in <%s>", name)
		}
		switch p.data[p.pos] {
		case '>':
			p.pos++
			sortAttrs(n.Attrs)
			return n, false, nil
		case '/':
			if !p.hasPrefix("/>") {
				return nil, false, p.errf("expected '/>' in <%s>", name)
			}
			p.pos += 2
			sortAttrs(n.Attrs)
			return n, true, nil
		}
		if !hadSpace {
			return nil, false, p.errf("expected white space before attribute in <%s>", name)
		}
		an, err := p.name()
		if err != nil {
			return nil, false, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '=' {
			return nil, false, p.errf("attribute %s in <%s> has no value", an, name)
		}
		p.pos++
		p.skipSpace()
		if p.pos >= len(p.data) || (p.data[p.pos] != '"' && p.data[p.pos] != '\'') {
			return nil, false, p.errf("attribute %s in <%s>: value not quoted", an, name)
		}
		q := p.data[p.pos]
		end := bytes.IndexByte(p.data[p.pos+1:], q)
		if end < 0 {
			return nil, false, p.errf("attribute %s in <%s>: unterminated value", an, name)
		}
		end += p.pos + 1
		raw := p.data[p.pos+1 : end]
		if bytes.IndexByte(raw, '<') >= 0 {
			return nil, false, p.errf("attribute %s in <%s>: '<' in value", an, name)
		}
		for _, a := range n.Attrs {
			if a.Name == an {
				return nil, false, p.errf("attribute %s repeated in <%s>", an, name)
			}
		}
		var val string
		if !bytes.ContainsAny(raw, "&\t\n\r") {
			val = p.src[p.pos+1 : end]
		} else {
			p.text, err = p.appendText(p.text[:0], raw)
			if err != nil {
				return nil, false, p.errf("attribute %s in <%s>: %v", an, name, err)
			}
			for i, c := range p.text {
				if c == '\t' || c == '\n' || c == '\r' {
					p.text[i] = ' '
				}
			}
			val = string(p.text)
		}
		n.Attrs = append(n.Attrs, Attr{Name: an, Value: val})
		p.advance(end + 1)
	}
}

func sortAttrs(a []Attr) {
	if len(a) < 2 {
		return
	}
	slices.SortFunc(a, func(x, y Attr) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Value, y.Value)
	})
}

var errBadEntity = errors.New("bad entity reference")

// appendText appends raw character data to dst, decoding entity references
// and normalising CR LF and lone CR to LF.
func (p *xmlParser) appendText(dst, raw []byte) ([]byte, error) {
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "&\r")
		if i < 0 {
			return append(dst, raw...), nil
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		if raw[0] == '\r' {
			dst = append(dst, '\n')
			raw = raw[1:]
			if len(raw) > 0 && raw[0] == '\n' {
				raw = raw[1:]
			}
			continue
		}
		semi := bytes.IndexByte(raw, ';')
		if semi < 0 || semi > 12 {
			return dst, fmt.Errorf("%w: unterminated '&'", errBadEntity)
		}
		ent := string(raw[1:semi])
		raw = raw[semi+1:]
		switch ent {
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "amp":
			dst = append(dst, '&')
		case "quot":
			dst = append(dst, '"')
		case "apos":
			dst = append(dst, '\'')
		default:
			if len(ent) < 2 || ent[0] != '#' {
				return dst, fmt.Errorf("%w: undefined entity &%s;", errBadEntity, ent)
			}
			var v uint64
			var err error
			if ent[1] == 'x' {
				v, err = strconv.ParseUint(ent[2:], 16, 32)
			} else {
				v, err = strconv.ParseUint(ent[1:], 10, 32)
			}
			r := rune(v)
			if err != nil || v == 0 || v > utf8.MaxRune || !utf8.ValidRune(r) || ent[1] == '+' || (len(ent) > 2 && ent[2] == '+') {
				return dst, fmt.Errorf("%w: invalid character reference &%s;", errBadEntity, ent)
			}
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, nil
}
