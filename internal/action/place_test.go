package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/github"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// gadgets is a CRD that the pull request moves and edits; the padding keeps the move above
// git's 50 % similarity.
func gadgets(withB bool) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Gadget\n    listKind: GadgetList\n    plural: gadgets\n    singular: gadget\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                a:\n                  type: string\n")
	if withB {
		b.WriteString("                b:\n                  type: integer\n")
	}
	for i := range 12 {
		fmt.Fprintf(&b, "                f%02d:\n                  type: string\n                  description: Field %d of the gadget.\n", i, i)
	}
	return []byte(b.String())
}

// TestEveryChannelPlacesAlike feeds one pull request's findings through every channel: the
// review (against GitHub's own view of the diff, which refuses comments off it), check run
// annotations, workflow commands, SARIF, rdjson, JSON, the Markdown report and the check run
// summary. The pull request inserts lines above a removed field in one hunk (and a property
// in its place), removes a field from a file it moves, and edits a sample outside `paths` — a
// file that mentions no CRD — and an unchanged sample breaks. Every channel that points at head
// must name the same head lines.
func TestEveryChannelPlacesAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a repository")
	}
	repo := gittest.New(t)
	repo.Copy("config/crd/widgets.yaml", "../../testdata/action/pr/base.yaml")
	repo.Write("config/crd/gadgets.yaml", gadgets(true))
	repo.Write("config/samples/widget.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: small\nspec:\n  size: 3\n  color: red\n"))
	repo.Write("config/samples/big.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: big\nspec:\n  size: 9\n"))
	base := repo.Commit("base")
	headCRD, err := os.ReadFile("../../testdata/action/pr/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	widgets := strings.Replace(string(headCRD), "              type: object\n              properties:\n                name:\n                  type: string\n                  description: Display name.\n",
		"              type: object\n              description: What the widget is.\n              properties:\n                label:\n                  type: string\n", 1)
	widgets = strings.Replace(widgets, "maximum: 10", "maximum: 5", 1)
	repo.Write("config/crd/widgets.yaml", []byte(widgets))
	repo.Remove("config/crd/gadgets.yaml")
	repo.Write("deploy/gadgets-crd.yaml", gadgets(false))
	repo.Write("config/samples/widget.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: small\nspec:\n  size: 7\n  color: red\n"))
	head := repo.Commit("insert above a removal, move gadgets, grow the sample")

	r, err := source.OpenRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := check.Git(r, check.GitOptions{Base: base.String(), Head: head.String(),
		Filter: source.Filter{Paths: []string{"config/crd/**", "deploy/**"}}})
	if err != nil {
		t.Fatal(err)
	}
	fs := res.Findings
	rep := report.Report{Findings: fs, CRDs: res.CRDs}

	// Where each finding at warning or above is, as file:line:rule, read from the head side.
	want := []string{
		"config/crd/widgets.yaml:29:field-removed", // .spec.name: removed below an inserted line; at size:, not at label:
		"config/crd/widgets.yaml:32:max-decreased",
		"config/samples/big.yaml:6:sample-invalid", // unchanged: in the review body
		"config/samples/widget.yaml:6:sample-invalid",
		"deploy/gadgets-crd.yaml:26:field-removed", // .spec.b, in the moved file: at f00
	}
	channels := map[string][]string{}
	add := func(ch, file string, line int, rule string) {
		channels[ch] = append(channels[ch], fmt.Sprintf("%s:%d:%s", file, line, rule))
	}
	for _, a := range github.Annotations(fs) {
		add("annotations", a.Path, a.StartLine, strings.SplitN(a.Title, ":", 2)[0])
	}
	render := func(format string) []byte {
		var buf bytes.Buffer
		if err := report.Write(&buf, format, rep); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cmdRE := regexp.MustCompile(`^::(?:error|warning) file=([^,]+),line=(\d+),title=([a-z-]+)`)
	for _, l := range strings.Split(string(render("github")), "\n") {
		if m := cmdRE.FindStringSubmatch(l); m != nil {
			add("workflow commands", m[1], atoi(t, m[2]), m[3])
		}
	}
	var js struct {
		Findings []struct {
			Rule, Severity string
			Head           struct {
				File string
				Line int
			}
		}
	}
	if err := json.Unmarshal(render("json"), &js); err != nil {
		t.Fatal(err)
	}
	for _, f := range js.Findings {
		if f.Severity != "info" {
			add("json", f.Head.File, f.Head.Line, f.Rule)
		}
	}
	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string } `json:"artifactLocation"`
						Region           struct{ StartLine, StartColumn, EndLine, EndColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(render("sarif"), &sarif); err != nil {
		t.Fatal(err)
	}
	for _, r := range sarif.Runs[0].Results {
		pl := r.Locations[0].PhysicalLocation
		data, err := os.ReadFile(repo.Dir + "/" + pl.ArtifactLocation.URI)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Split(string(data), "\n")[pl.Region.StartLine-1]
		if pl.Region.EndLine != pl.Region.StartLine || pl.Region.StartColumn != 1 || pl.Region.EndColumn != len(text)+1 || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
			t.Errorf("SARIF location %+v, want the whole line %q", pl, text)
		}
		add("sarif", pl.ArtifactLocation.URI, pl.Region.StartLine, r.RuleID)
	}
	var rd struct {
		Diagnostics []struct {
			Message  string
			Location struct {
				Path  string
				Range struct{ Start struct{ Line int } }
			}
			Code struct{ Value string }
		}
	}
	if err := json.Unmarshal(render("rdjson"), &rd); err != nil {
		t.Fatal(err)
	}
	for _, d := range rd.Diagnostics {
		add("rdjson", d.Location.Path, d.Location.Range.Start.Line, d.Code.Value)
	}
	cellRE := regexp.MustCompile("^\\| (?:❌ error|⚠️ warning) \\| `([a-z-]+)` \\|.*\\| ([^|]+?):(\\d+)(?: \\([^|]*\\))? \\|")
	for _, l := range strings.Split(string(render("markdown")), "\n") {
		if m := cellRE.FindStringSubmatch(l); m != nil {
			add("markdown report", m[2], atoi(t, m[3]), m[1])
		}
	}
	summary, text := github.Summary(report.Report{Findings: fs, CRDs: res.CRDs}, "")
	for _, l := range strings.Split(summary+"\n"+text, "\n") {
		if m := cellRE.FindStringSubmatch(l); m != nil {
			add("check run summary", m[2], atoi(t, m[3]), m[1])
		}
	}
	for ch, got := range channels {
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s place the findings at\n%v, want\n%v", ch, got, want)
		}
	}
	if len(channels) != 7 {
		t.Errorf("%d channels read, want 7: %v", len(channels), channels)
	}

	// The review, against GitHub's own view of the diff: inline comments only (the sample
	// too), a removed line on the LEFT at its base line, the others on the RIGHT at the head
	// line every channel uses.
	srv := fakegithub.New(t, "tok")
	srv.Files = fakegithub.FilesFromGit(t, repo.Dir, base.String(), head.String())
	api, err := github.NewREST(srv.URL, "octo/widgets", "tok", http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	pub := &github.Publisher{API: api, Identity: "github-actions[bot]"}
	rr, err := pub.Review(context.Background(), github.PR{Number: 7, HeadSHA: head.String()}, fs, res.Diff)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Inline != 4 || rr.FileLevel != 0 || rr.InBody != 1 {
		t.Errorf("review %+v, want 4 inline comments and the unchanged sample in the body", rr)
	}
	var comments []string
	for _, c := range srv.Comments {
		comments = append(comments, fmt.Sprintf("%s:%d:%s:%s", c.Path, c.Line, c.Side, ruleOf(c.Body)))
	}
	sort.Strings(comments)
	wantComments := "config/crd/widgets.yaml:26:LEFT:field-removed config/crd/widgets.yaml:32:RIGHT:max-decreased config/samples/widget.yaml:6:RIGHT:sample-invalid deploy/gadgets-crd.yaml:26:LEFT:field-removed"
	if strings.Join(comments, " ") != wantComments {
		t.Errorf("comments\n%v, want\n%s", comments, wantComments)
	}
	// Plain channels say where a removed line was.
	for _, d := range rd.Diagnostics {
		if d.Code.Value == "field-removed" && !strings.HasSuffix(d.Message, "(removed; was line 26)") && !strings.HasSuffix(d.Message, "(removed; was line 26 of config/crd/gadgets.yaml)") {
			t.Errorf("rdjson message %q does not say where the removed line was", d.Message)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
