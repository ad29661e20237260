package github

import (
	"context"
	"fmt"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
)

// MaxAnnotationsPerRequest is GitHub's limit; further annotations go in later updates.
const MaxAnnotationsPerRequest = 50

// Conclusions of a check run.
const (
	Success = "success"
	Failure = "failure"
	Neutral = "neutral"
	// Cancelled is the post step's conclusion for a run the main step left open.
	Cancelled = "cancelled"
)

// Annotations turns findings at warning or above into check run annotations at their head lines
// (report.Placed), as every other channel places them.
func Annotations(fs []finding.Finding) []Annotation {
	var out []Annotation
	for i := range fs {
		f := &fs[i]
		if f.Severity < finding.Warning {
			continue
		}
		level := "warning"
		if f.Severity == finding.Error {
			level = "failure"
		}
		title := f.Rule
		if where := plainLocation(f); where != "" {
			title += ": " + where
		}
		file, line := report.Placed(f)
		out = append(out, Annotation{
			Path: file, StartLine: line, EndLine: line,
			Level: level, Title: truncate(title, MaxTitleBytes), Message: truncate(report.PlacedMessage(f), maxMessageBytes),
		})
	}
	return out
}

func plainLocation(f *finding.Finding) string {
	s := f.CRD
	for _, p := range []string{f.Version, f.Path} {
		if p != "" {
			s += " " + p
		}
	}
	return s
}

// Check is an open check run: its ID and the name every update repeats.
type Check struct {
	ID   int64
	Name string
}

// FinishCheck completes a check run with out: its title, summary, text and annotations.
// Annotations go in batches of 50 (each update repeats the title, summary and text, as GitHub
// requires); a batch GitHub refuses is counted in the summary, not fatal. The completing update
// goes through p.Completer when set, and is sent once more without annotations if GitHub refuses
// it with them: an open check run blocks the pull request.
func (p *Publisher) FinishCheck(ctx context.Context, c Check, conclusion string, out CheckOutput) error {
	title, text, anns := truncate(out.Title, MaxTitleBytes), truncate(out.Text, MaxSummaryBytes), out.Annotations
	lost := 0
	for len(anns) > MaxAnnotationsPerRequest {
		batch := anns[:MaxAnnotationsPerRequest]
		anns = anns[MaxAnnotationsPerRequest:]
		if err := p.API.UpdateCheckRun(ctx, c.ID, c.Name, "", CheckOutput{Title: title, Summary: truncate(out.Summary, MaxSummaryBytes), Text: text, Annotations: batch}); err != nil {
			p.logf("check run: GitHub refused %d annotations: %v", len(batch), err)
			lost += len(batch)
		}
	}
	complete := p.Completer
	if complete == nil {
		complete = p.API
	}
	err := complete.UpdateCheckRun(ctx, c.ID, c.Name, conclusion, CheckOutput{Title: title, Summary: withLost(out.Summary, lost), Text: text, Annotations: anns})
	if err == nil || len(anns) == 0 {
		if err != nil {
			return fmt.Errorf("completing check run %q: %w", c.Name, err)
		}
		return nil
	}
	p.logf("check run: GitHub refused the completing update with %d annotations (%v); completing it without them", len(anns), err)
	if err := complete.UpdateCheckRun(ctx, c.ID, c.Name, conclusion, CheckOutput{Title: title, Summary: withLost(out.Summary, lost+len(anns)), Text: text}); err != nil {
		return fmt.Errorf("completing check run %q: %w", c.Name, err)
	}
	return nil
}

// withLost cuts a summary to GitHub's limit, saying how many annotations GitHub refused.
func withLost(summary string, lost int) string {
	if lost == 0 {
		return truncate(summary, MaxSummaryBytes)
	}
	note := fmt.Sprintf("\n\n%d annotations could not be attached (GitHub refused them); the summary above and the workflow log list every finding.", lost)
	return truncate(summary, MaxSummaryBytes-len(note)) + note
}
