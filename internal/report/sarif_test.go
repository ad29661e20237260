package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crdguard/crdguard/internal/finding"

	"github.com/crdguard/crdguard/internal/schematest"
)

// TestSARIFValidates checks the SARIF output against the OASIS SARIF 2.1.0 JSON schema.
func TestSARIFValidates(t *testing.T) {
	schema := schematest.Compile(t, "../../testdata/sarif/sarif-schema-2.1.0.json")
	var buf bytes.Buffer
	if err := SARIF(&buf, hostile()); err != nil {
		t.Fatal(err)
	}
	if err := schematest.Validate(schema, buf.Bytes()); err != nil {
		t.Fatalf("SARIF does not validate: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Results) != 2 || run.Results[0].RuleID != "field-removed" || run.Results[0].Level != "error" ||
		run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "config/crd/widgets.yaml" ||
		run.Results[0].Locations[0].PhysicalLocation.Region.StartLine != 57 || run.Results[0].PartialFingerprints["crdguard/v1"] == "" {
		t.Fatalf("results %+v", run.Results)
	}
	levels := map[string]string{}
	for _, r := range run.Tool.Driver.Rules {
		levels[r.ID] = r.DefaultConfiguration.Level
		// GitHub's limits: descriptions 1,024 characters, names 255; a name is not the ID.
		if n := utf8.RuneCountInString(r.FullDescription.Text); n > 1024 || n == 0 {
			t.Errorf("%s: fullDescription of %d characters", r.ID, n)
		}
		if n := utf8.RuneCountInString(r.ShortDescription.Text); n > 1024 || n == 0 {
			t.Errorf("%s: shortDescription of %d characters", r.ID, n)
		}
		if r.Name == r.ID || r.Name == "" || len(r.Name) > 255 {
			t.Errorf("%s: name %q", r.ID, r.Name)
		}
		if !strings.HasPrefix(r.Help.Text, r.FullDescription.Text) {
			t.Errorf("%s: the help does not carry the whole doc", r.ID)
		}
	}
	if got := run.OriginalURIBaseIDs["%SRCROOT%"].Description.Text; got == "" {
		t.Errorf("%%SRCROOT%% is not described")
	}
	for _, r := range run.Results {
		pl := r.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URIBaseID != "%SRCROOT%" || pl.Region.StartColumn != 1 || pl.Region.EndLine != pl.Region.StartLine {
			t.Errorf("%s: location %+v", r.RuleID, pl)
		}
		for _, esc := range []string{"&#58;", `\.`, `\(`, "&lt;", `\[`, "&amp;"} {
			if strings.Contains(r.Message.Text, esc) {
				t.Errorf("%s: message %q holds the Markdown escape %s", r.RuleID, r.Message.Text, esc)
			}
		}
	}
	if got := run.Results[0].Message.Text; got != "removed <\u200bscript>alert(1)<\u200b/script> @\u200boctocat [click]\u200b(https\u200b://evil.example) `code` next line (line 57 of the base version)" {
		t.Errorf("message %q", got)
	}
	if full := run.Tool.Driver.Rules[3]; full.ID != "invalid-crd" || !strings.HasSuffix(full.FullDescription.Text, "is not.") {
		t.Errorf("invalid-crd's description is not cut after a whole sentence: %q", full.FullDescription.Text)
	}
	if levels["field-removed"] != "error" || levels["map-type-changed"] != "warning" || levels["field-added"] != "note" {
		t.Fatalf("rule levels %v", levels)
	}
}

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID                   string                `json:"id"`
					Name                 string                `json:"name"`
					ShortDescription     struct{ Text string } `json:"shortDescription"`
					FullDescription      struct{ Text string } `json:"fullDescription"`
					Help                 struct{ Text string } `json:"help"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		OriginalURIBaseIDs map[string]struct {
			Description struct{ Text string } `json:"description"`
		} `json:"originalUriBaseIds"`
		Properties struct {
			Compared map[string]string `json:"compared"`
		} `json:"properties"`
		Invocations []struct {
			Notifications []struct {
				Level   string                `json:"level"`
				Message struct{ Text string } `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID              string                `json:"ruleId"`
			Level               string                `json:"level"`
			Message             struct{ Text string } `json:"message"`
			PartialFingerprints map[string]string     `json:"partialFingerprints"`
			Locations           []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct{ StartLine, StartColumn, EndLine, EndColumn int } `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIFCap: beyond MaxSARIFResults (what code scanning shows of a run) errors are kept
// before warnings, in report order, and a notification counts the rest.
func TestSARIFCap(t *testing.T) {
	var r Report
	for i := range MaxSARIFResults + 3 {
		sev := finding.Warning
		if i%2 == 1 || i >= MaxSARIFResults {
			sev = finding.Error
		}
		r.Findings = append(r.Findings, finding.Finding{Rule: "field-removed", Severity: sev, Path: fmt.Sprintf(".spec.f%d", i),
			Message: "m", Location: finding.Location{File: "a.yaml", Line: i + 1, Side: finding.Head}})
	}
	_, log := writeSARIF(t, r)
	run := log.Runs[0]
	errors, warnings, last := 0, 0, 0
	for _, res := range run.Results {
		line := res.Locations[0].PhysicalLocation.Region.StartLine
		if line <= last {
			t.Fatalf("results out of report order at line %d", line)
		}
		last = line
		if res.Level == "error" {
			errors++
		} else {
			warnings++
		}
	}
	// 2,500 + 3 errors, and the first 2,497 warnings.
	if errors != MaxSARIFResults/2+3 || warnings != MaxSARIFResults/2-3 {
		t.Errorf("%d errors and %d warnings kept", errors, warnings)
	}
	notes := run.Invocations[0].Notifications
	if len(notes) != 1 || notes[0].Message.Text != "3 more findings at warning or above not in this log: GitHub code scanning shows at most 5000 results of a run (errors are kept first); the JSON report has them all" {
		t.Errorf("notifications %+v", notes)
	}
}

// writeSARIF renders r as SARIF and reads the log back.
func writeSARIF(t *testing.T, r Report) ([]byte, sarifLog) {
	t.Helper()
	var buf bytes.Buffer
	if err := SARIF(&buf, r); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), log
}
