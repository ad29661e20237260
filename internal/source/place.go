package source

import (
	"bytes"

	"github.com/crdguard/crdguard/internal/finding"
)

// Place sets every finding's Head, once, before any report renders: the head line that review
// comments, annotations, workflow commands, SARIF and rdjson all point at. A finding on head is
// shown at its own line; a finding on a base line is mapped through the diff of the comparison
// it comes from (diffs by baseline ref, "" for the pull request's own), so a removed field
// shows where its lines were. Without a diff (a live cluster's CRDs) or when the file is gone
// from head, Head stays nil.
func Place(fs []finding.Finding, diffs map[string]*Diff) {
	for i := range fs {
		f := &fs[i]
		f.Head = nil
		if f.Location.File == "" {
			continue
		}
		diff := diffs[f.Baseline]
		if f.Location.Side != finding.Base {
			line := max(f.Location.Line, 1)
			f.Head = &finding.HeadLine{File: f.Location.File, Line: line}
			if pr := diffs[""]; pr != nil {
				f.Head.EndColumn = pr.endColumn(f.Head.File, line)
			}
			continue
		}
		if diff == nil {
			continue
		}
		if path, line, removed, ok := diff.headOfBase(f.Location.File, max(f.Location.Line, 1)); ok {
			f.Head = &finding.HeadLine{File: path, Line: line, Removed: removed, EndColumn: diff.endColumn(path, line)}
		}
	}
}

// headOfBase is HeadPosition for the key line of a finding on the base side. When the key line
// was removed, what the finding is about is the key's whole block (the key and the lines
// indented below it); lines of the block that the diff happens to keep (a "type: string"
// aligned with the one of a property added in its place) belong to other properties now, so
// the block is shown at the kept head line that follows it, where it was.
func (d *Diff) headOfBase(basePath string, line int) (path string, head int, removed, ok bool) {
	path, head, removed, ok = d.HeadPosition(basePath, line)
	if !ok || !removed {
		return path, head, removed, ok
	}
	f, _ := d.File(basePath, false)
	lines := f.oldLines
	if end := blockEnd(lines, line); end > line && end < len(lines) {
		_, head, _, _ = d.HeadPosition(basePath, end+1)
	}
	return path, head, true, true
}

// blockEnd is the last line (1-based) of the YAML block that starts with the key at line: the
// lines below it that are blank, comments or indented deeper, and at the same indentation the
// items of a sequence the key holds ("versions:" followed by "- name: v1").
func blockEnd(lines [][]byte, line int) int {
	if line < 1 || line > len(lines) {
		return line
	}
	indent := func(l []byte) int { return len(l) - len(bytes.TrimLeft(l, " ")) }
	key := lines[line-1]
	k := indent(key)
	keyIsItem := bytes.HasPrefix(bytes.TrimLeft(key, " "), []byte("- "))
	end := line
scan:
	for i := line; i < len(lines); i++ {
		l := lines[i]
		text := bytes.TrimSpace(l)
		switch {
		case len(text) == 0 || text[0] == '#':
			continue // blank lines and comments go with what follows them
		case indent(l) > k, indent(l) == k && !keyIsItem && bytes.HasPrefix(text, []byte("- ")):
			end = i + 1
			continue
		}
		break scan
	}
	return end
}
