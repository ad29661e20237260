package report

import (
	"bytes"
	"encoding/json"
	"testing"

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
					ID                   string `json:"id"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
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
			RuleID              string            `json:"ruleId"`
			Level               string            `json:"level"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Locations           []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
					Region           struct{ StartLine int } `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}
