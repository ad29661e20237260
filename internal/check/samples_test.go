package check

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/validation"
)

// A sample the base schema already refused with the same errors is not the change's problem,
// edited or not: one notice. A sample that becomes invalid stays an error, and one refused
// before for another reason keeps a warning for the new error. Objects in folders of examples
// written to be refused are never samples.
func TestGitSamplesAlreadyInvalid(t *testing.T) {
	const (
		sample   = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: huge\n  namespace: default\nspec:\n  size: %d\n"
		lowered  = "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"
		already  = "1 sample problem(s) were not reported: the base schema already refused those samples with the same errors"
		maxErr   = "max-decreased error"
		negative = "1 object(s) in folders of examples written to be refused (invalid, negative, *-tests) were not validated as samples"
	)
	for _, tc := range []struct {
		name, file, base, head string
		want, severities       string
		notices                []string
	}{
		{"untouched", "config/samples/widget.yaml", "size: 50", "size: 50", lowered, maxErr, []string{already}},
		{"edited in the change", "config/samples/widget.yaml", "size: 50", "size: 60", lowered, maxErr, []string{already}},
		{"becomes invalid", "config/samples/widget.yaml", "size: 7", "size: 7", lowered +
			"sample-invalid widgets.example.com v1 .spec.size config/samples/widget.yaml:7 head\n", maxErr + ", sample-invalid error", nil},
		{"invalid before for another reason", "config/samples/widget.yaml", "size: 7\n  name: 5", "size: 7\n  name: 5", lowered +
			"sample-invalid widgets.example.com v1 .spec.size config/samples/widget.yaml:7 head\n", maxErr + ", sample-invalid warning", []string{already}},
		{"negative example", "hack/invalid-examples/widget.yaml", "size: 7", "size: 7", lowered, maxErr, []string{negative}},
		{"negative example that becomes valid", "examples/negative/widget.yaml", "size: 50", "size: 3", lowered, maxErr, []string{negative}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/old.yaml"))
			text := func(size string) []byte {
				return []byte(strings.Replace(fmt.Sprintf(sample, 0), "size: 0", size, 1))
			}
			tr.Write(tc.file, text(tc.base))
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
			tr.Write(tc.file, text(tc.head))
			tr.Commit("lower the maximum")
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			var sevs []string
			for _, f := range res.Findings {
				sevs = append(sevs, f.Rule+" "+f.Severity.String())
			}
			if got := strings.Join(sevs, ", "); got != tc.severities {
				t.Errorf("severities %s, want %s", got, tc.severities)
			}
			if !slices.Equal(res.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", res.Notices, tc.notices)
			}
		})
	}
}

// A sample whose blob is missing (a partial clone, actions/checkout with filter: blob:none) is a
// notice; the CRDs are still compared.
func TestGitSampleUnreadable(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/old.yaml"))
	sample := []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: lost\n  namespace: default\nspec:\n  size: 7\n")
	tr.Write("config/samples/widget.yaml", sample)
	tr.Branch("main", tr.Commit("base"))
	tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
	tr.Commit("lower the maximum")
	tr.dropBlob(sample)
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n")
	want := []string{
		"config/samples/widget.yaml: its content is missing from the repository (object not found), as in a partial or shallow clone; it is unchanged, so it was left out: a copy in it of a changed CRD is not compared",
		"samples: config/samples/widget.yaml: its content is missing from the repository (object not found), as in a partial or shallow clone; the custom resources it may hold were not validated against head's CRDs",
	}
	if !slices.Equal(res.Notices, want) {
		t.Errorf("notices %q, want %q", res.Notices, want)
	}
}

// Samples are validated against the definition the repository ships, not a draft of the same
// CRD in a docs folder; objects of test suites are not samples.
func TestGitSamplesShippedDefinitionOnly(t *testing.T) {
	tr := newTestRepo(t)
	old := caseFile(t, "sample-invalid/maximum-lowered/old.yaml")
	tr.Write("config/crd/widgets.yaml", old)
	tr.Write("docs/design/widgets.yaml", []byte(strings.Replace(string(old), "maximum: 10", "maximum: 100", 1)))
	sample := []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: seven\n  namespace: default\nspec:\n  size: 7\n")
	tr.Write("config/samples/widget.yaml", sample)
	tr.Write("test/e2e/widget.yaml", sample)
	tr.Branch("main", tr.Commit("base"))
	tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
	tr.Commit("lower the maximum")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"+
		"sample-invalid widgets.example.com v1 .spec.size config/samples/widget.yaml:7 head\n")
	if want := []string{"1 object(s) in test folders were not validated as samples"}; !slices.Equal(res.Notices, want) {
		t.Errorf("notices %q, want %q", res.Notices, want)
	}
}

// A changed manifest whose blob is missing (a partial or shallow clone) fails closed: one
// invalid-crd naming the file and side, the CRD on the other side neither added nor removed, the
// rest of the change still checked — not an abort.
func TestGitChangedBlobUnreadable(t *testing.T) {
	old, new := caseFile(t, "sample-invalid/maximum-lowered/old.yaml"), caseFile(t, "sample-invalid/maximum-lowered/new.yaml")
	const other = "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"
	for _, tc := range []struct {
		name    string
		missing []byte // the blob removed from the object store
		deleted bool   // the PR deletes deploy/gadgets.yaml instead of changing it
		want    string
		notices []string
	}{
		{"base side", old, false, other + "invalid-crd gadgets.example.com   deploy/gadgets.yaml:1 base\n", nil},
		{"head side", new, false, other + "invalid-crd gadgets.example.com   deploy/gadgets.yaml:1 head\n", []string{"samples: deploy/gadgets.yaml: its content is missing from the repository (object not found), as in a partial or shallow clone; the custom resources it may hold were not validated against head's CRDs"}},
		{"deleted file", old, true, other + "invalid-crd    deploy/gadgets.yaml:1 base\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", old)
			gadgets := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("widget"), []byte("gadget")) }
			tr.Write("deploy/gadgets.yaml", gadgets(old))
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", new)
			if tc.deleted {
				tr.Remove("deploy/gadgets.yaml")
			} else {
				tr.Write("deploy/gadgets.yaml", gadgets(new))
			}
			tr.Commit("lower the maximum")
			tr.dropBlob(gadgets(tc.missing))
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			// The readable side names what the file held; a deleted file's has nothing to name.
			what := "the base version of CRD gadgets.example.com"
			switch tc.name {
			case "head side":
				what = "the new version of CRD gadgets.example.com"
			case "deleted file":
				what = "the base version of the CRDs in this file"
			}
			want := "its content is missing from the repository (object not found), as in a partial or shallow clone: crdguard cannot read " + what +
				", so it cannot tell what this change does to it; make the file readable, or review the change by hand and acknowledge it"
			if f := res.Findings[len(res.Findings)-1]; f.Message != want {
				t.Errorf("message %q, want %q", f.Message, want)
			}
			if !slices.Equal(res.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", res.Notices, tc.notices)
			}
		})
	}
}

// With the default configuration the objects of test folders are not read at all, like their
// CRDs; an exclude list of one's own reads them, and they are counted, never validated.
func TestGitSamplesInTestFoldersNotRead(t *testing.T) {
	for _, tc := range []struct {
		config  string
		notices []string
	}{
		{"", nil},
		{"exclude: []\n", []string{"1 object(s) in test folders were not validated as samples"}},
	} {
		t.Run(tc.config, func(t *testing.T) {
			cfg, err := policy.Parse([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/old.yaml"))
			tr.Write("test/e2e/widget.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: seven\n  namespace: default\nspec:\n  size: 7\n"))
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
			tr.Commit("lower the maximum")
			res := tr.check(GitOptions{Base: "main", Filter: cfg.Filter()})
			assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n")
			if !slices.Equal(res.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", res.Notices, tc.notices)
			}
		})
	}
}

// A CRD the change seems to add while an unchanged file could not be read (a partial clone that
// could not fetch) fails closed: the unread file may define it already. Without a CRD added, the
// unread file stays a notice.
func TestGitAddedWhileUnchangedUnread(t *testing.T) {
	const missing = "config/crd/all.yaml: its content is missing from the repository (object not found), as in a partial or shallow clone; it is unchanged, so it was left out: a copy in it of a changed CRD is not compared"
	for _, tc := range []struct {
		name string
		add  bool
		want string
	}{
		{"a CRD added", true, "invalid-crd gadgets.example.com   config/crd/all.yaml:1 base\n" +
			"max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"},
		{"no CRD added", false, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new := caseFile(t, "sample-invalid/maximum-lowered/old.yaml"), caseFile(t, "sample-invalid/maximum-lowered/new.yaml")
			gadgets := bytes.ReplaceAll(bytes.ReplaceAll(old, []byte("widget"), []byte("gadget")), []byte("Widget"), []byte("Gadget"))
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", old)
			all := append(append([]byte{}, old...), "# the bundle\n"...)
			tr.Write("config/crd/all.yaml", all)
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", new)
			if tc.add {
				tr.Write("config/crd/gadgets.yaml", gadgets)
			}
			tr.Commit("head")
			tr.dropBlob(all)
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			notices := []string{missing, "samples: config/crd/all.yaml: its content is missing from the repository (object not found), as in a partial or shallow clone; the custom resources it may hold were not validated against head's CRDs"}
			if !slices.Equal(res.Notices, notices) {
				t.Errorf("notices %q\nwant %q", res.Notices, notices)
			}
			for _, f := range res.Findings {
				if f.Rule == "invalid-crd" && f.Message != "CRD gadgets.example.com looks new, but the content of config/crd/all.yaml is missing from the repository (object not found), as in a partial or shallow clone, and may define it already: crdguard cannot read the base version of CRD gadgets.example.com, so it cannot tell what this change does to it; make the file readable, or review the change by hand and acknowledge it" {
					t.Errorf("message %q", f.Message)
				}
			}
		})
	}
}

// TestSampleSchemasLetGo: the schemas samples are validated against are held while the
// samples of their CRD version are validated, not to the end (argo-workflows v4.0.0 →
// v4.1.0 held 110 MB of them at its peak): when the second CRD's schemas are built, the
// first one's are gone. The findings are those of each sample.
func TestSampleSchemasLetGo(t *testing.T) {
	gadgets := func(data []byte) []byte {
		return []byte(strings.NewReplacer("widgets", "gadgets", "Widget", "Gadget", "widget", "gadget", "- wd\n", "- gd\n").Replace(string(data)))
	}
	tr := newTestRepo(t)
	old, new := caseFile(t, "sample-invalid/maximum-lowered/old.yaml"), caseFile(t, "sample-invalid/maximum-lowered/new.yaml")
	tr.Write("config/crd/widgets.yaml", old)
	tr.Write("config/crd/gadgets.yaml", gadgets(old))
	tr.Write("config/samples/widget.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 7\n"))
	tr.Write("config/samples/gadget.yaml", []byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  size: 7\n"))
	tr.Branch("main", tr.Commit("base"))
	tr.Write("config/crd/widgets.yaml", new)
	tr.Write("config/crd/gadgets.yaml", gadgets(new))
	tr.Commit("lower the maximums")
	built := 0
	var released atomic.Int32
	t.Cleanup(func() { newSchema = validation.NewSchema })
	newSchema = func(c *crd.CRD, version string) (*validation.Schema, error) {
		if built == 2 { // the first CRD's head and base schemas have validated its sample
			for i := 0; i < 100 && released.Load() < 2; i++ {
				runtime.GC()
				runtime.Gosched()
			}
			if n := released.Load(); n < 2 {
				t.Errorf("building %s's schema: %d of the first CRD's 2 schemas let go", c.Name, n)
			}
		}
		built++
		s, err := validation.NewSchema(c, version)
		if s != nil {
			runtime.AddCleanup(s, func(n *atomic.Int32) { n.Add(1) }, &released)
		}
		return s, err
	}
	res := tr.check(GitOptions{Base: "main"})
	if built != 4 {
		t.Errorf("%d schemas built, want 4", built)
	}
	assertFindings(t, res, "max-decreased gadgets.example.com v1 .spec.size config/crd/gadgets.yaml:32 head\n"+
		"max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"+
		"sample-invalid gadgets.example.com v1 .spec.size config/samples/gadget.yaml:6 head\n"+
		"sample-invalid widgets.example.com v1 .spec.size config/samples/widget.yaml:6 head\n")
}
