package report

import (
	"encoding/json"
	"io"

	"github.com/crdguard/crdguard/internal/finding"
)

// document is the --format json output; fields may be added, never renamed.
type document struct {
	Findings []finding.Finding `json:"findings"`
	Summary  Summary           `json:"summary"`
	Notices  []string          `json:"notices,omitempty"`
	Compared *Compared         `json:"compared,omitempty"`
	// PullRequest is set in Action runs on a pull request.
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
}

// JSON writes the stable machine-readable report.
func JSON(w io.Writer, r Report) error {
	doc := document{Findings: r.Findings, Summary: Summarize(r), Notices: r.Notices, Compared: r.Compared, PullRequest: r.PullRequest}
	if doc.Findings == nil {
		doc.Findings = []finding.Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
