package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/crdguard/crdguard/internal/finding"
)

// Workflow writes GitHub Actions workflow commands (::error file=…,line=…,title=…::message), one per
// finding at warning or above at its head line (Placed), escaped by go-githubactions so CRD text
// cannot inject commands.
// It is both --format github and the Action's fallback when its token may not post reviews or
// check runs (pull requests from forks).
func Workflow(w io.Writer, r Report) error {
	ew := &errWriter{w: w}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Severity < finding.Warning {
			continue
		}
		title := f.Rule
		if f.CRD != "" {
			title += ": " + f.CRD
		}
		for _, p := range []string{f.Version, f.Path} {
			if p != "" {
				title += " " + p
			}
		}
		file, line := Placed(f)
		cmd := &githubactions.Command{
			Name:    "warning",
			Message: keepNewlines(PlacedMessage(f)),
			Properties: githubactions.CommandProperties{
				"file": plain(file), "line": strconv.Itoa(line), "title": plain(title),
			},
		}
		if f.Severity == finding.Error {
			cmd.Name = "error"
		}
		ew.printf("%s\n", cmd.String())
	}
	s := Summarize(r)
	ew.printf("%s\n", s.Line())
	return ew.err
}

// keepNewlines removes control characters except line breaks, which the command escapes.
func keepNewlines(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
