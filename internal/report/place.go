package report

import (
	"strconv"

	"github.com/crdguard/crdguard/internal/finding"
)

// Placed is where the channels that point at files as they are in head (annotations, workflow
// commands, SARIF, rdjson) show a finding: the head line the placement chose (finding.Shown),
// else — a file the change deleted, or diff mode — its own location. Every such channel uses it,
// so they agree line for line.
func Placed(f *finding.Finding) (file string, line int) {
	if h, ok := f.Shown(); ok {
		return h.File, h.Line
	}
	return f.Location.File, max(f.Location.Line, 1)
}

// wasLine says where a finding shown away from its own line was: "removed; was line 43", with
// the base path when the file moved, or "line 43 of the base version" when head has no line for
// it; "" when it is shown at its own line.
func wasLine(f *finding.Finding) string {
	h, ok := f.Shown()
	switch {
	case f.Location.Side != finding.Base || f.Location.Line <= 0:
		return ""
	case !ok:
		return "line " + strconv.Itoa(f.Location.Line) + " of the base version"
	case !h.Removed:
		return ""
	case h.File != f.Location.File:
		return "removed; was line " + strconv.Itoa(f.Location.Line) + " of " + f.Location.File
	}
	return "removed; was line " + strconv.Itoa(f.Location.Line)
}

// PlacedMessage is a finding's message where it is shown at Placed: for lines the change
// removed, it says where they were.
func PlacedMessage(f *finding.Finding) string {
	if was := wasLine(f); was != "" {
		return f.Message + " (" + was + ")"
	}
	return f.Message
}

// Where is "file:line" of Placed, for tables, with where a removed line was:
// "config/crd/a.yaml:40 (removed; was line 43)", or "old.yaml:43 (base)" for a line only the
// base has.
func Where(f *finding.Finding) string {
	file, line := Placed(f)
	s := file + ":" + strconv.Itoa(line)
	if _, ok := f.Shown(); !ok && f.Location.Side == finding.Base {
		return s + " (base)"
	}
	if was := wasLine(f); was != "" {
		s += " (" + was + ")"
	}
	return s
}

// related is another line a finding points to, beside where it is shown: the Go line its schema
// node is generated from (DESIGN §6), or the property a removed one was probably renamed to.
type related struct {
	what string
	at   finding.Location
}

// relatedPlaces lists a finding's related lines, for the channels that link them (SARIF's
// relatedLocations, rdjson's related_locations).
func relatedPlaces(f *finding.Finding) []related {
	var out []related
	if f.Source != nil {
		out = append(out, related{"Go source", *f.Source})
	}
	if f.RenamedTo != nil {
		out = append(out, related{"added beside it: " + f.RenamedTo.Path, f.RenamedTo.Location})
	}
	return out
}
