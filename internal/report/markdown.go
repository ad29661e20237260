package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// MaxMarkdown is the most characters GitHub keeps in a comment or step summary; the Markdown
// report stays within it.
const MaxMarkdown = 65536

// Markdown writes a table a reviewer can read. Every piece of text from the CRDs (field names,
// enum values, rule expressions) is escaped: it cannot break the table, inject HTML or links,
// or @-mention anyone. The whole report stays within MaxMarkdown bytes (so within GitHub's
// character limit): findings that do not fit are counted in a last line.
func Markdown(w io.Writer, r Report) error {
	s := Summarize(r)
	var head strings.Builder
	fmt.Fprintf(&head, "### %s\n\n", s.Line())
	if r.Compared != nil {
		fmt.Fprintf(&head, "%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	var shown []finding.Finding
	for _, f := range r.Findings {
		if f.Severity > finding.Info {
			shown = append(shown, f)
		}
	}
	var tail strings.Builder
	if s.Info > 0 {
		fmt.Fprintf(&tail, "\n%s (info) not shown.\n", Count(s.Info, "safe change"))
	}
	if s.Ignored > 0 {
		fmt.Fprintf(&tail, "%s ignored by configuration.\n", Count(s.Ignored, "finding"))
	}
	for i, n := range r.Notices {
		line := fmt.Sprintf("\n> notice: %s\n", Escape(n))
		if head.Len()+tail.Len()+len(line) > MaxMarkdown/2 { // notices never crowd out findings
			fmt.Fprintf(&tail, "\n> %s not shown.\n", Count(len(r.Notices)-i, "more notice"))
			break
		}
		tail.WriteString(line)
	}
	var body strings.Builder
	if len(shown) == 0 {
		body.WriteString("No breaking CRD changes found.\n")
	} else {
		body.WriteString("| Severity | Rule | CRD | Version | Path | Before → after | Location | What it means |\n")
		body.WriteString("|---|---|---|---|---|---|---|---|\n")
		ab := newAbbreviator(shown, textValueRunes)
		const moreReserve = 100
		for i, f := range shown {
			row := fmt.Sprintf("| %s | `%s` | %s | %s | %s | %s | %s | %s |\n",
				severityIcon(f.Severity), f.Rule, Escape(f.CRD), Escape(f.Version), Escape(f.Path),
				Escape(ab.beforeAfter(&f)), Escape(Where(&f)), Escape(f.Message))
			if head.Len()+body.Len()+len(row)+tail.Len()+moreReserve > MaxMarkdown {
				fmt.Fprintf(&body, "\n%s not shown here (GitHub's %d-character limit): the JSON and SARIF reports have them all.\n", Count(len(shown)-i, "more finding"), MaxMarkdown)
				break
			}
			body.WriteString(row)
		}
	}
	_, err := io.WriteString(w, head.String()+body.String()+tail.String())
	return err
}

func severityIcon(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "❌ error"
	case finding.Warning:
		return "⚠️ warning"
	}
	return "ℹ️ info"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
