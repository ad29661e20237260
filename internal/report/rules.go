package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/crdguard/crdguard/internal/rules"
)

// ruleDoc is one rule in `crdguard rules --format json`.
type ruleDoc struct {
	ID          string `json:"id"`
	Severity    string `json:"severity"`
	Level       string `json:"level"`
	Summary     string `json:"summary"`
	Doc         string `json:"doc"`
	Ratchetable bool   `json:"ratchetable"`
}

// Rules lists the registry in text, json or markdown (the table the README embeds).
func Rules(w io.Writer, format string, all []*rules.Rule) error {
	ew := &errWriter{w: w}
	switch format {
	case "text":
		for _, r := range all {
			ew.printf("%-32s %-8s %-9s %s\n", r.ID, r.Severity, r.Level, r.Summary)
			ew.printf("%s\n\n", indentWrap(r.Doc, "    ", 96))
		}
	case "json":
		docs := make([]ruleDoc, len(all))
		for i, r := range all {
			docs[i] = ruleDoc{r.ID, r.Severity.String(), r.Level.String(), r.Summary, r.Doc, r.Ratchetable}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(docs)
	case "markdown":
		ew.printf("| Rule | Default | Level | When | Why, and what to do instead |\n|---|---|---|---|---|\n")
		for _, r := range all {
			ratchet := ""
			if r.Ratchetable {
				ratchet = " Ratcheting applies."
			}
			ew.printf("| `%s` | %s | %s | %s | %s%s |\n", r.ID, r.Severity, r.Level, strings.ReplaceAll(r.Summary, "|", "\\|"), strings.ReplaceAll(r.Doc, "|", "\\|"), ratchet)
		}
	default:
		return fmt.Errorf("unknown format %q (allowed: text, json, markdown)", format)
	}
	return ew.err
}

func indentWrap(s, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(s) {
		if len(line)+len(word)+1 > width && line != indent {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}
