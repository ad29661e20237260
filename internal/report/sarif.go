package report

import (
	"io"
	"net/url"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// InformationURI is where SARIF viewers link the tool.
const InformationURI = "https://github.com/crdguard/crdguard"

// RulesDocURL is the page every rule's doc has a section in (docs/rules.md).
const RulesDocURL = InformationURI + "/blob/main/docs/rules.md"

// Version is crdguard's version, set by the binary at startup.
var Version = "dev"

var sarifLevels = map[finding.Severity]string{finding.Error: "error", finding.Warning: "warning", finding.Info: "note"}

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning: one reportingDescriptor per rule and a
// result per finding at warning or above, located at its file and line, with a partial
// fingerprint that does not depend on the line.
func SARIF(w io.Writer, r Report) error {
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI("crdguard", InformationURI)
	run.Tool.Driver.Version = &Version
	for _, rule := range rules.All() {
		run.AddRule(rule.ID).
			WithName(rule.ID).
			WithShortDescription(sarif.NewMultiformatMessageString(rule.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString(rule.Doc)).
			WithHelpURI(RulesDocURL + "#" + rule.ID).
			WithTextHelp(rule.Doc).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevels[rule.Severity]))
	}
	run.Results = []*sarif.Result{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Severity < finding.Warning {
			continue
		}
		region := sarif.NewRegion().WithStartLine(max(f.Location.Line, 1))
		loc := sarif.NewPhysicalLocation().
			WithArtifactLocation(sarif.NewSimpleArtifactLocation(artifactURI(f.Location.File))).
			WithRegion(region)
		result := run.CreateResultForRule(f.Rule).
			WithLevel(sarifLevels[f.Severity]).
			WithMessage(sarif.NewTextMessage(f.Message)).
			WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(loc)})
		result.WithPartialFingerPrints(map[string]interface{}{"crdguard/v1": f.Fingerprint()})
		if src := f.Source; src != nil {
			// The Go line the schema node is generated from, as a related location: code
			// scanning shows the YAML result and links the line the author edits.
			goLoc := sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(artifactURI(src.File))).
				WithRegion(sarif.NewRegion().WithStartLine(max(src.Line, 1)))
			result.AddRelatedLocation(sarif.NewLocationWithPhysicalLocation(goLoc).
				WithMessage(sarif.NewTextMessage("Go source (" + string(src.Side) + ")")))
		}
	}
	sarifContext(run, r)
	log.AddRun(run)
	return log.PrettyWrite(w)
}

// sarifContext records what was compared (run properties) and the notices (notifications of
// the run's invocation), so code scanning keeps what the other formats say.
func sarifContext(run *sarif.Run, r Report) {
	if r.Compared != nil {
		run.PropertyBag = *sarif.NewPropertyBag()
		run.Add("compared", r.Compared)
	}
	inv := sarif.NewInvocation().WithExecutionSuccess(true)
	for _, n := range r.Notices {
		inv.AddTToolExecutionNotification(sarif.NewNotification().WithLevel("note").WithTextMessage(n))
	}
	run.AddInvocations(inv)
}

// artifactURI makes a repository-relative path a relative URI reference: spaces, %, # and other
// characters a URI cannot hold are percent-encoded, folders stay separated by /, and a colon in
// the first folder cannot be read as a scheme.
func artifactURI(path string) string {
	return (&url.URL{Path: path}).String()
}
