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

// Rules lists the registry in text, json or markdown (the table docs/checks.md embeds).
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

// RulesPage writes docs/rules.md: one section per rule, whose heading is the rule ID, so review
// comments can link to #<rule-id>; examples maps rule IDs to a unified diff that triggers it.
func RulesPage(w io.Writer, all []*rules.Rule, examples map[string]string) error {
	ew := &errWriter{w: w}
	ew.printf("# crdguard rules\n\nGenerated from the registry and `testdata/rules` (`go test ./internal/cli -run TestGeneratedDocs -update`); do not edit.\n\n")
	ew.printf("**Acknowledging a finding.** Severities are defaults: set a rule's severity (or `off`) under `rules:` in `.crdguard.yaml`; drop one finding with an `ignore:` entry (crd, version, path, rule and a required reason); or, for a deliberate breaking change, add the pull request label named by `acknowledgeLabel` (default `crd-breaking-change-approved`): the check turns neutral.\n\n")
	ew.printf("**CEL rules: proofs and examples.** A changed or added CEL rule is evaluated with the API server's CEL runtime against the old schema. When the data the rules read has a finite domain there (presence, booleans, enums, small integer ranges, fields new in the change), every combination is tried: a rule that rejects nothing the old schema accepted is proven safe (`validation-rule-rewritten`, `validation-rule-loosened`, `validation-rule-implied`, info). Otherwise boundary values are searched; an object the old schema accepts and the new one rejects, confirmed by the API server's validator, is the finding's `example` (a tightening shown, not asserted). With neither, the change stays an error and says how many objects were tried.\n")
	for _, r := range all {
		ew.printf("\n## %s\n\n**Default:** %s · **Level:** %s", r.ID, r.Severity, r.Level)
		if r.Ratchetable {
			ew.printf(" · **Ratcheting:** with `ratcheting: true` this is a warning, except for constraints an allOf/anyOf/oneOf/not of an ancestor places on the field and CEL rules that use oldSelf")
		}
		ew.printf("\n\n%s\n\n%s\n", r.Summary, r.Doc)
		if r.Advice != "" {
			ew.printf("\n**What to do instead:** %s.\n", r.Advice)
		}
		if ex := examples[r.ID]; ex != "" {
			ew.printf("\n```diff\n%s```\n", ex)
		}
	}
	return ew.err
}
