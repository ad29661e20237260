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
	// RelatedLocations holds the Go source line (DESIGN §6) and a rename's new property, when
	// the finding has them.
	RelatedLocations []rdRelated `json:"related_locations,omitempty"`
}

type rdRelated struct {
	Message  string     `json:"message"`
	Location rdLocation `json:"location"`
}

type rdLocation struct {
	Path string `json:"path"`
	// Range is set on every diagnostic; a related Go line of the base commit has none.
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
// section of docs/rules.md. Every diagnostic has the head path and line every other channel
// uses (Placed): reviewdog places diagnostics on the file as it is in head and drops those
// without a line in most filter modes and reporters, so a removed field sits on the kept line
// where its lines were and says "removed; was line N". Messages are plain text (Defuse), read
// as written with -reporter=local, Gerrit or Bitbucket, and still mention and link nobody where
// reviewdog posts them as Markdown.
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
		file, line := Placed(f)
		d := rdDiagnostic{
			Message:  Defuse(PlacedMessage(f)),
			Location: rdLocation{Path: plain(file), Range: &rdRange{Start: rdPosition{Line: line}}},
			Severity: rdSeverities[f.Severity],
			Code:     rdCode{Value: f.Rule, URL: RulesDocURL + "#" + f.Rule},
		}
		for _, r := range relatedPlaces(f) {
			rel := rdRelated{Message: Defuse(r.what), Location: rdLocation{Path: plain(r.at.File)}}
			if r.at.Side == finding.Base { // reviewdog places lines in head only
				rel.Message += " (line " + strconv.Itoa(r.at.Line) + " of the base version)"
			} else {
				rel.Location.Range = &rdRange{Start: rdPosition{Line: r.at.Line}}
			}
			d.RelatedLocations = append(d.RelatedLocations, rel)
		}
		doc.Diagnostics = append(doc.Diagnostics, d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
