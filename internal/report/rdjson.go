package report

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/crdguard/crdguard/internal/finding"
)

// rdResult is reviewdog's Diagnostic Format (RDFormat) DiagnosticResult, the input of
// `reviewdog -f=rdjson`; the field names are the protobuf JSON names of reviewdog's rdf package.
type rdResult struct {
	Source      rdSource       `json:"source"`
	Diagnostics []rdDiagnostic `json:"diagnostics"`
	// Notices and Compared are not RDFormat fields: reviewdog discards unknown fields (and the
	// schema allows them), and they keep what every other format says about the run.
	Notices  []string  `json:"notices,omitempty"`
	Compared *Compared `json:"compared,omitempty"`
}

type rdSource struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type rdDiagnostic struct {
	Message  string     `json:"message"`
	Location rdLocation `json:"location"`
	Severity string     `json:"severity"`
	Code     rdCode     `json:"code"`
	// RelatedLocations holds the Go source line (DESIGN §6), when the finding has one.
	RelatedLocations []rdRelated `json:"related_locations,omitempty"`
}

type rdRelated struct {
	Message  string     `json:"message"`
	Location rdLocation `json:"location"`
}

type rdLocation struct {
	Path  string   `json:"path"`
	Range *rdRange `json:"range,omitempty"`
}

type rdRange struct {
	Start rdPosition `json:"start"`
}

type rdPosition struct {
	Line int `json:"line"`
}

type rdCode struct {
	Value string `json:"value"`
	URL   string `json:"url"`
}

var rdSeverities = map[finding.Severity]string{finding.Error: "ERROR", finding.Warning: "WARNING", finding.Info: "INFO"}

// RDJSON writes reviewdog's rdjson: one diagnostic per finding at warning or above (info
// findings are safe changes, not review comments, as in SARIF), coded with the rule ID and its
// section of docs/rules.md. reviewdog places a diagnostic on a line of the file as it is in the
// head, so a finding on a line only the base has (a removed field) carries no range — a
// file-level diagnostic, with the base line in its message — rather than a line number that
// points at unrelated text in the new file. reviewdog posts messages as Markdown comments, so
// CRD text in them is escaped as in the Markdown report (no HTML, links or @-mentions).
func RDJSON(w io.Writer, r Report) error {
	doc := rdResult{
		Source:      rdSource{Name: "crdguard", URL: InformationURI},
		Diagnostics: []rdDiagnostic{},
		Notices:     r.Notices,
		Compared:    r.Compared,
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Severity < finding.Warning {
			continue
		}
		d := rdDiagnostic{
			Message:  Escape(f.Message),
			Location: rdLocation{Path: plain(f.Location.File)},
			Severity: rdSeverities[f.Severity],
			Code:     rdCode{Value: f.Rule, URL: RulesDocURL + "#" + f.Rule},
		}
		switch {
		case f.Location.Side == finding.Base && f.Location.Line > 0:
			d.Message += " (line " + strconv.Itoa(f.Location.Line) + " of the base version)"
		case f.Location.Line > 0:
			d.Location.Range = &rdRange{Start: rdPosition{Line: f.Location.Line}}
		}
		if src := f.Source; src != nil {
			rel := rdRelated{Message: "Go source", Location: rdLocation{Path: plain(src.File)}}
			if src.Side == finding.Base { // reviewdog places lines in head only, as above
				rel.Message += " (line " + strconv.Itoa(src.Line) + " of the base version)"
			} else {
				rel.Location.Range = &rdRange{Start: rdPosition{Line: src.Line}}
			}
			d.RelatedLocations = append(d.RelatedLocations, rel)
		}
		doc.Diagnostics = append(doc.Diagnostics, d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
