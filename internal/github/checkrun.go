package github

import (
	"context"
	"fmt"

	"github.com/crdguard/crdguard/internal/finding"
)

// MaxAnnotationsPerRequest is GitHub's limit; further annotations go in later updates.
const MaxAnnotationsPerRequest = 50

// Conclusions of a check run.
const (
	Success = "success"
	Failure = "failure"
	Neutral = "neutral"
)

// Annotations turns findings at warning or above into check run annotations. Findings should
// already point at lines of the head commit (see the action's mapping of removed lines).
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
		out = append(out, Annotation{
			Path: f.Location.File, StartLine: max(f.Location.Line, 1), EndLine: max(f.Location.Line, 1),
			Level: level, Title: truncate(title, MaxTitleBytes), Message: truncate(f.Message, maxMessageBytes),
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

// FinishCheck completes a check run: annotations in batches of 50 (each update repeats the
// title and summary, as GitHub requires), the conclusion with the last one.
func (p *Publisher) FinishCheck(ctx context.Context, id int64, conclusion, title, summary string, anns []Annotation) error {
	title = truncate(title, MaxTitleBytes)
	summary = truncate(summary, MaxSummaryBytes)
	for start := 0; ; start += MaxAnnotationsPerRequest {
		end := min(start+MaxAnnotationsPerRequest, len(anns))
		last := end == len(anns)
		c := ""
		if last {
			c = conclusion
		}
		if err := p.API.UpdateCheckRun(ctx, id, c, CheckOutput{Title: title, Summary: summary, Annotations: anns[start:end]}); err != nil {
			return fmt.Errorf("annotations %d–%d of %d: %w", start+1, end, len(anns), err)
		}
		if last {
			return nil
		}
	}
}
