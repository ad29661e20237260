package report

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

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

// versionRE is a release or pseudo-version (v1.2.3, 1.2.3-rc.1, v0.0.0-20260101-abcdef):
// what SARIF's tool version may carry; "(devel)" or "dev" say only that the build has none.
var versionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?$`)

// IsVersion says whether v is a release or pseudo-version, not a development build's marker.
func IsVersion(v string) bool { return versionRE.MatchString(v) }

var sarifLevels = map[finding.Severity]string{finding.Error: "error", finding.Warning: "warning", finding.Info: "note"}

// GitHub code scanning's limits (docs.github.com, "SARIF support for code scanning"): rule
// descriptions of at most 1,024 characters, names of 255; a run with more than 25,000 results is
// refused and only the first 5,000 by severity are shown, so a log keeps MaxSARIFResults.
const (
	maxSARIFDescription = 1024
	MaxSARIFResults     = 5000
)

// srcRoot is the uriBaseId of every location: paths are relative to the repository's root.
const srcRoot = "%SRCROOT%"

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning: one reportingDescriptor per rule and a
// result per finding at warning or above, at its head line (Placed) relative to %SRCROOT%, with
// a partial fingerprint that does not depend on the line. Messages are plain text (Defuse): code
// scanning shows message.text as it is. Beyond MaxSARIFResults, errors are kept before
// warnings and a notification says how many were left out.
func SARIF(w io.Writer, r Report) error {
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI("crdguard", InformationURI)
	if IsVersion(Version) {
		// Without a version the property is omitted, as SARIF allows: validators reject
		// "(devel)", which is what a build from source says of itself.
		v := Version
		run.Tool.Driver.Version = &v
	}
	for _, rule := range rules.All() {
		run.AddRule(rule.ID).
			WithName(ruleName(rule.ID)).
			WithShortDescription(sarif.NewMultiformatMessageString(cutSentences(rule.Summary, maxSARIFDescription))).
			WithFullDescription(sarif.NewMultiformatMessageString(cutSentences(rule.Doc, maxSARIFDescription))).
			WithHelpURI(RulesDocURL + "#" + rule.ID).
			WithTextHelp(rule.Doc).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevels[rule.Severity]))
	}
	run.WithOriginalUriBaseIds(map[string]*sarif.ArtifactLocation{
		srcRoot: sarif.NewArtifactLocation().WithDescriptionText("The root of the repository compared."),
	})
	run.Results = []*sarif.Result{}
	shown, left := sarifResults(r.Findings)
	for _, f := range shown {
		file, line := Placed(f)
		region := sarif.NewRegion().WithStartLine(line).WithStartColumn(1).WithEndLine(line)
		if h, ok := f.Shown(); ok && h.EndColumn > 0 {
			region.WithEndColumn(h.EndColumn)
		}
		loc := sarif.NewPhysicalLocation().
			WithArtifactLocation(artifactLocation(file, r.Root)).
			WithRegion(region)
		result := run.CreateResultForRule(f.Rule).
			WithLevel(sarifLevels[f.Severity]).
			WithMessage(sarif.NewTextMessage(Defuse(PlacedMessage(f)))).
			WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(loc)})
		result.WithPartialFingerPrints(map[string]interface{}{"crdguard/v1": f.Fingerprint()})
		for _, rel := range relatedPlaces(f) {
			// A related line (the Go source, a rename's new property): code scanning shows the
			// YAML result and links the line. A line of the base commit is not in the files
			// code scanning shows: it is named in the message.
			loc := sarif.NewLocation().WithMessage(sarif.NewTextMessage(Defuse(rel.what)))
			if rel.at.Side == finding.Base {
				loc.WithMessage(sarif.NewTextMessage(Defuse(fmt.Sprintf("%s: %s:%d of the base version", rel.what, rel.at.File, rel.at.Line))))
			} else {
				loc.WithPhysicalLocation(sarif.NewPhysicalLocation().
					WithArtifactLocation(artifactLocation(rel.at.File, r.Root)).
					WithRegion(sarif.NewRegion().WithStartLine(max(rel.at.Line, 1))))
			}
			result.AddRelatedLocation(loc)
		}
	}
	notices := r.Notices
	if left > 0 {
		notices = append(append([]string{}, notices...), fmt.Sprintf("%s at warning or above not in this log: GitHub code scanning shows at most %d results of a run (errors are kept first); the JSON report has them all", Count(left, "more finding"), MaxSARIFResults))
	}
	sarifContext(run, r.Compared, notices)
	log.AddRun(run)
	return log.PrettyWrite(w)
}

// sarifResults are the findings at warning or above that a log holds, in report order: all of
// them, or the MaxSARIFResults most important (finding.Importance, then report order); left
// counts the others.
func sarifResults(fs []finding.Finding) (shown []*finding.Finding, left int) {
	var all []*finding.Finding
	for i := range fs {
		if fs[i].Severity >= finding.Warning {
			all = append(all, &fs[i])
		}
	}
	if len(all) <= MaxSARIFResults {
		return all, 0
	}
	keep := map[*finding.Finding]bool{}
	first := slices.Clone(all)
	slices.SortStableFunc(first, finding.Importance)
	for _, f := range first[:MaxSARIFResults] {
		keep[f] = true
	}
	for _, f := range all {
		if keep[f] {
			shown = append(shown, f)
		}
	}
	return shown, len(all) - len(shown)
}

// ruleName is a rule's SARIF name, distinct from its ID as SARIF validators ask: the ID in
// Pascal case (field-removed → FieldRemoved).
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// cutSentences keeps the whole sentences of s that fit in n characters (code scanning's limit on
// descriptions), or cuts at a word and marks the cut when not even the first one fits.
func cutSentences(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	end := 0
	for i := 0; i < n; i++ {
		if r[i] == '.' && (i+1 == len(r) || r[i+1] == ' ') {
			end = i + 1
		}
	}
	if end > 0 {
		return string(r[:end])
	}
	cut := string(r[:n-1])
	if sp := strings.LastIndexByte(cut, ' '); sp > 0 {
		cut = cut[:sp]
	}
	return cut + "…"
}

// sarifContext records what was compared (run properties) and the notices (notifications of
// the run's invocation), so code scanning keeps what the other formats say.
func sarifContext(run *sarif.Run, compared *Compared, notices []string) {
	if compared != nil {
		run.PropertyBag = *sarif.NewPropertyBag()
		run.Add("compared", compared)
	}
	inv := sarif.NewInvocation().WithExecutionSuccess(true)
	for _, n := range notices {
		inv.AddTToolExecutionNotification(sarif.NewNotification().WithLevel("note").WithTextMessage(Defuse(n)))
	}
	run.AddInvocations(inv)
}

// artifactLocation is where a file is, as SARIF's rule for uriBaseId asks (SARIF1004: a uri with
// a uriBaseId is a relative reference): relative to %SRCROOT% (root) when the file is under it,
// else an absolute file:// URI without uriBaseId — an absolute path outside root, or a relative
// one that leaves it (../crd.yaml). Without a root, a relative path stays relative to %SRCROOT%.
func artifactLocation(path, root string) *sarif.ArtifactLocation {
	abs := path
	if !filepath.IsAbs(path) {
		if root == "" {
			return sarif.NewSimpleArtifactLocation(artifactURI(filepath.ToSlash(path))).WithUriBaseId(srcRoot)
		}
		abs = filepath.Join(root, path)
	}
	if root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return sarif.NewSimpleArtifactLocation(artifactURI(filepath.ToSlash(rel))).WithUriBaseId(srcRoot)
		}
	}
	slash := filepath.ToSlash(abs)
	if !strings.HasPrefix(slash, "/") { // C:/… on Windows
		slash = "/" + slash
	}
	return sarif.NewSimpleArtifactLocation((&url.URL{Scheme: "file", Path: slash}).String())
}

// artifactURI makes a repository-relative path a relative URI reference: spaces, %, # and other
// characters a URI cannot hold are percent-encoded, folders stay separated by /, and a colon in
// the first folder cannot be read as a scheme.
func artifactURI(path string) string {
	return (&url.URL{Path: path}).String()
}
