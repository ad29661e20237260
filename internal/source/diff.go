package source

import (
	"bytes"
	"unicode/utf16"
)

// FileDiff is one changed file: its path on each side ("" where it does not exist), the hunks
// a unified diff of it shows, and within them the runs of removed and added lines (Changes,
// without context).
type FileDiff struct {
	From, To string
	Hunks    []Hunk
	Changes  []Hunk
	// oldLines and newLines are the lines of each side (nil when not known), for placing
	// findings: a removed key's block, a line's length.
	oldLines, newLines [][]byte
	// old and new are the contents while pending: a diff is computed only for the files a
	// finding is placed in.
	old, new []byte
	pending  bool
}

// LazyFileDiff is NewFileDiff computed when the file is first looked at, so a pull request's
// many changed manifests cost a diff only where a finding lands.
func LazyFileDiff(from, to string, old, new []byte) FileDiff {
	return FileDiff{From: from, To: to, old: old, new: new, pending: true}
}

// Diff is the unified diff between two commits, file by file.
type Diff struct {
	Files  []FileDiff
	byTo   map[string]int
	byFrom map[string]int
	// read, when set, reads a file of head the diff does not hold (an unchanged sample or CRD
	// copy), for the length of a line; unchanged caches its lines.
	read      func(path string) ([]byte, bool)
	unchanged map[string][][]byte
}

// Add records one changed file.
func (d *Diff) Add(f FileDiff) {
	if d.byTo == nil {
		d.byTo, d.byFrom = map[string]int{}, map[string]int{}
	}
	d.Files = append(d.Files, f)
	if f.To != "" {
		d.byTo[f.To] = len(d.Files) - 1
	}
	if f.From != "" {
		d.byFrom[f.From] = len(d.Files) - 1
	}
}

// File returns the diff of the file with this path on the given side (head: its new path, base:
// its old path).
func (d *Diff) File(path string, head bool) (FileDiff, bool) {
	m := d.byFrom
	if head {
		m = d.byTo
	}
	i, ok := m[path]
	if !ok {
		return FileDiff{}, false
	}
	if f := &d.Files[i]; f.pending {
		*f = NewFileDiff(f.From, f.To, f.old, f.new)
	}
	return d.Files[i], true
}

// endColumn is the column after the last character of a line of a file in head, in UTF-16
// code units (SARIF's default column kind); 0 when the diff does not hold the file's text.
func (d *Diff) endColumn(path string, line int) int {
	lines := d.headLines(path)
	if line < 1 || line > len(lines) {
		return 0
	}
	text := bytes.TrimRight(lines[line-1], "\r\n")
	return len(utf16.Encode([]rune(string(text)))) + 1
}

// headLines are the lines of a file of head: from the diff when it changed, else read once.
func (d *Diff) headLines(path string) [][]byte {
	if f, ok := d.File(path, true); ok {
		return f.newLines
	}
	if d.read == nil {
		return nil
	}
	if lines, ok := d.unchanged[path]; ok {
		return lines
	}
	if d.unchanged == nil {
		d.unchanged = map[string][][]byte{}
	}
	data, _ := d.read(path)
	d.unchanged[path] = splitLines(data)
	return d.unchanged[path]
}

// Contains reports whether a line of a file on one side is shown by the diff: an added, removed
// or context line. Review comments can only be placed on such lines.
func (d *Diff) Contains(path string, line int, head bool) bool {
	f, ok := d.File(path, head)
	if !ok {
		return false
	}
	for _, h := range f.Hunks {
		start, n := h.OldStart, h.OldLines
		if head {
			start, n = h.NewStart, h.NewLines
		}
		if line >= start && line < start+n {
			return true
		}
	}
	return false
}

// Removed reports whether a line of a file in the base commit is removed by the diff, rather
// than kept (as context or outside the hunks).
func (d *Diff) Removed(basePath string, line int) bool {
	f, ok := d.File(basePath, false)
	if !ok {
		return false
	}
	if f.To == "" {
		return true
	}
	for _, c := range f.Changes {
		if line >= c.OldStart && line < c.OldStart+c.OldLines {
			return true
		}
	}
	return false
}

// HeadPosition maps a line of a file in the base commit to the line of the same file in head
// where it is, for channels that can only point at head: a kept line (outside the hunks or in
// their context) to its own head line, counting every insertion and removal above it; a removed
// line to the first kept head line after the removed run — where the removed lines were, never
// a line the change added in their place — or, at the end of the file, the last kept line
// before them. It returns the head path and line, whether the line was removed, and false when
// the file is gone from head.
func (d *Diff) HeadPosition(basePath string, line int) (path string, head int, removed, ok bool) {
	f, found := d.File(basePath, false)
	if !found {
		return basePath, line, false, true // unchanged file: same path, same line
	}
	if f.To == "" {
		return "", 0, true, false
	}
	offset := 0
	for _, c := range f.Changes {
		first := c.OldStart // the first removed line; a pure insertion comes after OldStart
		if c.OldLines == 0 {
			first++
		}
		if line < first {
			break
		}
		if line < first+c.OldLines {
			after := c.NewStart + c.NewLines // the kept line after the run
			if c.NewLines == 0 {
				after = c.NewStart + 1
			}
			if f.newLines != nil && after > len(f.newLines) {
				after -= c.NewLines + 1 // the end of the file: the kept line before the run
			}
			return f.To, max(after, 1), true, true
		}
		offset += c.NewLines - c.OldLines
	}
	return f.To, max(line+offset, 1), false, true
}
