package crd

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// YAML parsing is nearly all of crdguard's decoding time, and CRDs are written by generators in
// a small part of YAML: block mappings and sequences, plain and quoted single-line scalars,
// plain scalars folded over lines, and literal block scalars. parseFast builds the same
// yaml.Node trees as go.yaml.in/yaml/v3 for that part, several times faster; for anything else
// (flow collections, anchors, tags, folded blocks, tabs, CR line ends, …) it gives up and the
// caller parses with yaml.v3. A differential test and a fuzz target hold the two parsers to the
// same trees.

type fastParser struct {
	lines [][]byte
	// first is the 1-based number of lines[0].
	first int
	i     int
}

type giveUp struct{}

// parseFast returns the documents of data, or ok=false where yaml.v3 must decide.
func parseFast(data []byte) (docs []*yaml.Node, ok bool) {
	if len(data) == 0 || !printable(data) {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(giveUp); !is {
				panic(r)
			}
			docs, ok = nil, false
		}
	}()
	lines := bytes.Split(data, []byte("\n"))
	for _, l := range lines {
		// Document markers with content after them, and document ends, are yaml.v3's to read.
		if (bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("..."))) && !isDocStart(l) {
			return nil, false
		}
	}
	p := &fastParser{lines: lines, first: 1}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			break
		}
		if isDocStart(p.lines[p.i]) {
			p.i++
			continue
		}
		if p.lines[p.i][0] == '%' || bytes.HasPrefix(p.lines[p.i], []byte("...")) {
			return nil, false
		}
		root := p.node(-1)
		docs = append(docs, &yaml.Node{Kind: yaml.DocumentNode, Line: root.Line, Column: root.Column, Content: []*yaml.Node{root}})
		p.skipBlank()
		if p.i < len(p.lines) && !isDocStart(p.lines[p.i]) {
			panic(giveUp{})
		}
	}
	return docs, true
}

func isDocStart(l []byte) bool {
	return bytes.Equal(bytes.TrimRight(l, " "), []byte("---"))
}

// skipBlank moves past empty and comment-only lines.
func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) {
		t := bytes.TrimLeft(p.lines[p.i], " ")
		if len(t) != 0 && t[0] != '#' {
			return
		}
		p.i++
	}
}

func indentOfLine(l []byte) int { return len(l) - len(bytes.TrimLeft(l, " ")) }

// node parses the block node starting at the current line, which must be indented more than
// parent (a sequence may also sit at the parent's indentation: see value).
func (p *fastParser) node(parent int) *yaml.Node {
	p.skipBlank()
	if p.i >= len(p.lines) {
		panic(giveUp{})
	}
	l := p.lines[p.i]
	ind := indentOfLine(l)
	rest := l[ind:]
	if isSeqEntry(rest) {
		return p.sequence(ind)
	}
	if ind <= parent {
		panic(giveUp{})
	}
	return p.mapping(ind, false)
}

func isSeqEntry(rest []byte) bool {
	return len(rest) > 0 && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')
}

// mapping parses a block mapping whose keys sit at column ind. With dashLine, its first key is
// on the current "- " line of a sequence (a compact mapping), the others below it.
func (p *fastParser) mapping(ind int, dashLine bool) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: p.first + p.i, Column: ind + 1}
	for first := true; ; first = false {
		var l []byte
		if dashLine && first {
			// Present the dash's line as if the key started it.
			l = append(bytes.Repeat([]byte(" "), ind), p.lines[p.i][ind:]...)
		} else {
			p.skipBlank()
			if p.i >= len(p.lines) {
				return m
			}
			l = p.lines[p.i]
			li := indentOfLine(l)
			if li < ind || isDocStart(l) {
				return m
			}
			if li > ind || isSeqEntry(l[li:]) {
				panic(giveUp{})
			}
		}
		key, value := p.pair(l, ind)
		m.Content = append(m.Content, key, value)
	}
}

// pair parses "key: value" at the current line (indented by ind) and what value spans.
func (p *fastParser) pair(l []byte, ind int) (*yaml.Node, *yaml.Node) {
	rest := l[ind:]
	colon := keyEnd(rest)
	if colon < 0 {
		panic(giveUp{})
	}
	keyText := string(bytes.TrimRight(rest[:colon], " "))
	if utf8.RuneCount(rest[:colon]) > 1000 || keyText == "<<" {
		panic(giveUp{}) // YAML limits implicit keys to 1024 characters
	}
	if keyText == "" || strings.ContainsAny(keyText[:1], "\"'&*!|>%@`[]{},?#-") && !(keyText[0] == '-' && len(keyText) > 1 && keyText[1] != ' ') {
		panic(giveUp{})
	}
	line := p.first + p.i
	key := plainScalar(keyText, line, ind+1)
	if key.Tag != "!!str" {
		panic(giveUp{}) // a non-string key (true:, 1:) is decoded differently by each library
	}
	after := bytes.TrimLeft(rest[colon+1:], " ")
	col := colAt(l, len(l)-len(after))
	if len(after) == 0 || after[0] == '#' {
		col = colAt(l, ind+colon+1) // yaml.v3 puts an empty value right after the colon
	}
	p.i++
	return key, p.value(after, line, col, ind, true)
}

// keyEnd finds the ": " (or final ":") that ends a plain key.
func keyEnd(rest []byte) int {
	for j := 0; j < len(rest); j++ {
		switch rest[j] {
		case ':':
			if j+1 == len(rest) || rest[j+1] == ' ' {
				return j
			}
		case '#':
			if j > 0 && rest[j-1] == ' ' {
				return -1
			}
		}
	}
	return -1
}

// value parses what follows "key:" or "- ": text on the same line (after), or a nested block.
// ind is the indentation of the key or dash; inMapping allows a sequence at the same
// indentation as its key.
func (p *fastParser) value(after []byte, line, col, ind int, inMapping bool) *yaml.Node {
	if len(after) == 0 || after[0] == '#' {
		p.skipBlank()
		if p.i < len(p.lines) && !isDocStart(p.lines[p.i]) {
			next := p.lines[p.i]
			ni := indentOfLine(next)
			if ni > ind || inMapping && ni == ind && isSeqEntry(next[ni:]) {
				return p.node(ind - 1)
			}
		}
		// An empty value is null, located right after the colon as yaml.v3 does.
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: line, Column: col}
	}
	switch after[0] {
	case '[', '{':
		return flow(after, line, col)
	case '&', '*', '!', '%', '@', '`', '>', '?':
		panic(giveUp{})
	case '|':
		return p.literal(after, line, col, ind)
	case '\'':
		return p.quoted(after, line, col, ind, '\'')
	case '"':
		return p.quoted(after, line, col, ind, '"')
	}
	if !plainStart(after) {
		panic(giveUp{}) // an indicator, "- - x", "key: - x", …
	}
	text := string(after)
	if k := strings.Index(text, " #"); k >= 0 {
		text = text[:k]
	}
	text = strings.TrimRight(text, " ")
	if strings.Contains(text, ": ") || strings.HasSuffix(text, ":") {
		panic(giveUp{})
	}
	// Folded continuation lines: more indented than the key, and not the start of a node.
	var parts []string
	for p.i < len(p.lines) && inMapping {
		next := p.lines[p.i]
		t := bytes.TrimLeft(next, " ")
		if len(t) == 0 {
			if len(parts) == 0 && !p.continues(ind) {
				break
			}
			parts = append(parts, "")
			p.i++
			continue
		}
		if indentOfLine(next) <= ind || t[0] == '#' {
			break
		}
		s := string(t)
		if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") || strings.Contains(s, " #") || isSeqEntry(t) {
			panic(giveUp{})
		}
		parts = append(parts, strings.TrimRight(s, " "))
		p.i++
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // trailing blank lines end the scalar
		p.i--
	}
	if len(parts) == 0 {
		return plainScalar(text, line, col)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: foldLines(text, parts), Line: line, Column: col}
}

// foldLines joins the lines of a multi-line flow scalar as YAML folds them: a single
// line break becomes a space and each blank line a newline. A final empty line is
// content (the text before a closing quote), not a blank line.
func foldLines(first string, rest []string) string {
	var b strings.Builder
	b.WriteString(first)
	blank := 0
	for k, s := range rest {
		if s == "" && k < len(rest)-1 {
			blank++
			continue
		}
		if blank > 0 {
			b.WriteString(strings.Repeat("\n", blank))
		} else {
			b.WriteByte(' ')
		}
		blank = 0
		b.WriteString(s)
	}
	return b.String()
}

// continues reports whether, past blank lines, a more indented line carries on a plain scalar.
func (p *fastParser) continues(ind int) bool {
	for j := p.i; j < len(p.lines); j++ {
		t := bytes.TrimLeft(p.lines[j], " ")
		if len(t) == 0 {
			continue
		}
		return indentOfLine(p.lines[j]) > ind && t[0] != '#'
	}
	return false
}

func (p *fastParser) sequence(ind int) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: p.first + p.i, Column: ind + 1}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return s
		}
		l := p.lines[p.i]
		li := indentOfLine(l)
		if li < ind || isDocStart(l) || li == ind && !isSeqEntry(l[li:]) {
			return s
		}
		if li > ind {
			panic(giveUp{})
		}
		after := bytes.TrimLeft(l[ind+1:], " ")
		itemCol := colAt(l, len(l)-len(after))
		line := p.first + p.i
		switch {
		case len(after) == 0 || after[0] == '#':
			p.i++
			s.Content = append(s.Content, p.value(nil, line, ind+2, ind, false))
		case keyEnd(after) >= 0 && after[0] != '"' && after[0] != '\'':
			// "- key: value": a mapping whose keys sit at the column after the dash.
			s.Content = append(s.Content, p.mapping(len(l)-len(after), true))
		default:
			p.i++
			s.Content = append(s.Content, p.value(after, line, itemCol, ind, false))
		}
	}
}

// literal parses a "|", "|-" or "|+" block scalar.
func (p *fastParser) literal(after []byte, line, col, ind int) *yaml.Node {
	header := strings.TrimRight(string(after), " ")
	chomp := byte(0)
	switch header {
	case "|":
	case "|-":
		chomp = '-'
	case "|+":
		chomp = '+'
	default:
		panic(giveUp{}) // indentation indicators and comments on the header line
	}
	var body []string
	blockInd := -1
	start := p.i
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		t := bytes.TrimLeft(l, " ")
		li := indentOfLine(l)
		if len(t) == 0 {
			if blockInd >= 0 && len(l) > blockInd {
				body = append(body, string(l[blockInd:]))
			} else {
				if blockInd < 0 && len(l) > ind+1 {
					panic(giveUp{}) // leading blank lines with spaces: yaml.v3 has rules of its own
				}
				body = append(body, "")
			}
			p.i++
			continue
		}
		if blockInd < 0 {
			if li <= ind {
				break
			}
			blockInd = li
		}
		if li < blockInd {
			break
		}
		body = append(body, string(l[blockInd:]))
		p.i++
	}
	// Trailing blank lines belong to the chomping; give back none of them.
	trailing := 0
	for len(body) > trailing && body[len(body)-1-trailing] == "" {
		trailing++
	}
	content := body[:len(body)-trailing]
	if blockInd < 0 {
		panic(giveUp{}) // an empty block scalar
	}
	v := strings.Join(content, "\n")
	// Line breaks after the last content line that the input really has (the last line of a
	// file may have none).
	lastContent := start + len(content) - 1
	breaks := 0
	for k := lastContent; k < p.i; k++ {
		if k < len(p.lines)-1 {
			breaks++
		}
	}
	switch chomp {
	case 0:
		if breaks > 0 {
			v += "\n"
		}
	case '+':
		v += strings.Repeat("\n", breaks)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.LiteralStyle, Value: v, Line: line, Column: col}
}

// plainScalar builds a plain scalar with the tag yaml.v3 resolves for it.
func plainScalar(text string, line, col int) *yaml.Node {
	if text == "<<" {
		panic(giveUp{}) // the merge key, which yaml.v3 tags !!merge wherever it stands
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: text, Line: line, Column: col}
	n.Tag = n.ShortTag()
	return n
}

// flow parses the flow collections generators write: {}, [] and [plain, plain, …].
func flow(after []byte, line, col int) *yaml.Node {
	t := strings.TrimRight(string(after), " ")
	if k := strings.Index(t, " #"); k >= 0 {
		t = strings.TrimRight(t[:k], " ")
	}
	switch {
	case t == "{}":
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: line, Column: col}
	case len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']':
		panic(giveUp{})
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: col}
	inner := t[1 : len(t)-1]
	if strings.TrimSpace(inner) == "" {
		return seq
	}
	offset := col + 1 // column of the first character inside [
	for _, item := range strings.Split(inner, ",") {
		lead := len(item) - len(strings.TrimLeft(item, " "))
		v := strings.TrimSpace(item)
		if v == "" || strings.ContainsAny(v, "[]{}:#&*!|>'\"%@`?") || !plainStart([]byte(v)) {
			panic(giveUp{})
		}
		seq.Content = append(seq.Content, plainScalar(v, line, offset+lead))
		offset += utf8.RuneCountInString(item) + 1
	}
	return seq
}

// quoted parses a single- or double-quoted scalar, which may go on over the following lines:
// line breaks fold into spaces, empty lines into newlines.
func (p *fastParser) quoted(after []byte, line, col, ind int, q byte) *yaml.Node {
	raw := []string{string(after[1:])}
	closing := -1
	for {
		last := raw[len(raw)-1]
		if closing = quoteEnd(last, q); closing >= 0 {
			endRest(last[closing+1:])
			raw[len(raw)-1] = last[:closing]
			break
		}
		if p.i >= len(p.lines) {
			panic(giveUp{})
		}
		next := p.lines[p.i]
		if len(bytes.TrimLeft(next, " ")) > 0 && indentOfLine(next) <= ind || isDocStart(next) {
			panic(giveUp{})
		}
		raw = append(raw, string(next))
		p.i++
	}
	if q == '"' {
		for _, l := range raw[:len(raw)-1] {
			if endsWithEscape(strings.TrimRight(l, " ")) {
				panic(giveUp{}) // an escaped line break
			}
		}
	}
	for k := range raw {
		if k > 0 {
			raw[k] = strings.TrimLeft(raw[k], " ")
		}
		if k < len(raw)-1 {
			raw[k] = strings.TrimRight(raw[k], " ")
		}
	}
	v := foldLines(raw[0], raw[1:])
	style := yaml.SingleQuotedStyle
	if q == '\'' {
		v = strings.ReplaceAll(v, "''", "'")
	} else {
		style = yaml.DoubleQuotedStyle
		v = unescapeYAML(v)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: style, Value: v, Line: line, Column: col}
}

// quoteEnd finds the closing quote in a line of a quoted scalar, or -1.
func quoteEnd(s string, q byte) int {
	for j := 0; j < len(s); j++ {
		switch {
		case q == '\'' && s[j] == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				j++
				continue
			}
			return j
		case q == '"' && s[j] == '\\':
			j++
		case q == '"' && s[j] == '"':
			return j
		}
	}
	return -1
}

func endsWithEscape(s string) bool {
	n := 0
	for j := len(s) - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// unescapeYAML resolves the escapes of a double-quoted scalar that generators write; others give up.
func unescapeYAML(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for j := 0; j < len(s); j++ {
		if s[j] != '\\' {
			b.WriteByte(s[j])
			continue
		}
		j++
		if j >= len(s) {
			panic(giveUp{})
		}
		switch s[j] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', ' ':
			b.WriteByte(s[j]) // "\ " keeps a space that line folding would drop
		case '0', 'a', 'b', 'e', 'f', 'v', 'N', '_', 'L', 'P':
			b.WriteString(map[byte]string{'0': "\x00", 'a': "\a", 'b': "\b", 'e': "\x1b", 'f': "\f", 'v': "\v",
				'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029"}[s[j]])
		case 'u':
			if j+4 >= len(s) {
				panic(giveUp{})
			}
			r, err := strconv.ParseUint(s[j+1:j+5], 16, 32)
			if err != nil || r >= 0xd800 && r < 0xe000 {
				panic(giveUp{})
			}
			b.WriteRune(rune(r))
			j += 4
		default:
			panic(giveUp{})
		}
	}
	return b.String()
}

// endRest accepts only spaces or a comment after a quoted scalar.
func endRest(rest string) {
	t := strings.TrimLeft(rest, " ")
	if t != "" && (t[0] != '#' || len(t) == len(rest)) {
		panic(giveUp{})
	}
}

// plainStart reports whether text may begin a plain scalar: not with an indicator character, and
// not with "-", "?" or ":" followed by a space.
func plainStart(t []byte) bool {
	if len(t) == 0 || bytes.IndexByte([]byte(",[]{}#&*!|>'\"%@`"), t[0]) >= 0 {
		return false
	}
	if t[0] == '-' || t[0] == '?' || t[0] == ':' {
		return len(t) > 1 && t[1] != ' '
	}
	return true
}

// printable reports whether data has only characters YAML allows (and no tab or CR, which this
// parser leaves to yaml.v3).
func printable(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false
		}
		i += size
	}
	return true
}

// colAt is the 1-based column, in characters as yaml.v3 counts, of a byte offset in a line.
func colAt(line []byte, offset int) int { return utf8.RuneCount(line[:offset]) + 1 }
