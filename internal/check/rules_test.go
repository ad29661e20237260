package check

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

var update = flag.Bool("update", false, "rewrite the want.json golden files")

const casesDir = "../../testdata/rules"

// runCase compares old.yaml with new.yaml of one case folder and renders the JSON report, with
// file names relative to the folder so the golden files do not depend on where tests run.
func runCase(t *testing.T, dir string) ([]finding.Finding, []byte) {
	t.Helper()
	if info, err := os.Stat(filepath.Join(dir, "old")); err == nil && info.IsDir() {
		return runGitCase(t, dir)
	}
	old, err := source.ReadPath(filepath.Join(dir, "old.yaml"), false)
	if err != nil {
		t.Fatal(err)
	}
	new, err := source.ReadPath(filepath.Join(dir, "new.yaml"), false)
	if err != nil {
		t.Fatal(err)
	}
	// A case may carry elsewhere.yaml: a file both sides ship besides old.yaml and new.yaml.
	if data, err := os.ReadFile(filepath.Join(dir, "elsewhere.yaml")); err == nil {
		for _, t := range []*source.Tree{old, new} {
			t.AddFile(filepath.ToSlash(filepath.Join(dir, "elsewhere.yaml")), data, true)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "samples.yaml")); err == nil {
		new.KeepObjects = true
		new.AddFile(filepath.ToSlash(filepath.Join(dir, "samples.yaml")), data, false)
	}
	// A case may carry its .crdguard.yaml as config.yaml.
	cfg := policy.Default()
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
		if cfg, err = policy.Load(filepath.Join(dir, "config.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	res := Trees(old, new, rules.Options{KubernetesVersion: cfg.KubernetesMinor(), OLM: cfg.OLM("")})
	if data, err := os.ReadFile(filepath.Join(dir, "stored.yaml")); err == nil {
		// A case's stored.yaml holds the objects a cluster stores, old.yaml its CRD.
		stored, err := Stored(context.Background(), old, new, StoredOptions{Lister: storedFile(data), KubernetesVersion: cfg.KubernetesMinor()})
		if err != nil {
			t.Fatal(err)
		}
		res.Findings = append(res.Findings, stored.Findings...)
		finding.Sort(res.Findings)
	}
	prefix := filepath.ToSlash(dir) + "/"
	return caseReport(t, cfg, res, nil, func(f *finding.Finding) {
		f.Location.File = strings.TrimPrefix(f.Location.File, prefix)
		if f.RenamedTo != nil {
			f.RenamedTo.Location.File = strings.TrimPrefix(f.RenamedTo.Location.File, prefix)
		}
		f.Message = strings.ReplaceAll(f.Message, prefix, "")
	})
}

// caseReport applies the case's policy to what the check found, makes each finding
// independent of where the case ran (fix), and renders the JSON report the golden holds.
func caseReport(t *testing.T, cfg *policy.Config, res Result, notices []string, fix func(*finding.Finding)) ([]finding.Finding, []byte) {
	t.Helper()
	out := cfg.Apply(res.Findings)
	for i := range out.Findings {
		fix(&out.Findings[i])
		// The cases hold what the rules find; the policy's change IDs are internal/change's
		// and internal/policy's to test.
		out.Findings[i].Change = ""
	}
	var buf bytes.Buffer
	if err := report.JSON(&buf, report.Report{Findings: out.Findings, CRDs: res.CRDs, Ignored: out.Ignored, Notices: notices}); err != nil {
		t.Fatal(err)
	}
	return out.Findings, buf.Bytes()
}

// runGitCase runs a case whose old/ and new/ folders are two commits of a repository (a case
// about where files lie: Helm charts), in git mode with the default configuration; file names
// in the report are the case's (old/… on the base side, new/… on the head side).
func runGitCase(t *testing.T, dir string) ([]finding.Finding, []byte) {
	t.Helper()
	tr := newTestRepo(t)
	files := func(side string) []string {
		var out []string
		root := filepath.Join(dir, side)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	copyFile := func(side, f string) string {
		src := filepath.Join(dir, side, f)
		name, gen := strings.CutSuffix(f, ".gen")
		if !gen {
			tr.Copy(f, src)
			return f
		}
		// NAME.gen stands for NAME, that many pseudo-random bytes ("bytes seed" in the file):
		// an incompressible payload without a megabyte of testdata.
		var n int
		var seed uint64
		if _, err := fmt.Sscan(string(caseFile(t, strings.TrimPrefix(src, casesDir+"/"))), &n, &seed); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		data := make([]byte, n)
		rng := rand.New(rand.NewPCG(seed, seed))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		tr.Write(name, data)
		return name
	}
	var written []string
	for _, f := range files("old") {
		written = append(written, copyFile("old", f))
	}
	tr.Branch("main", tr.Commit("base"))
	for _, f := range written {
		tr.Remove(f)
	}
	for _, f := range files("new") {
		copyFile("new", f)
	}
	tr.Commit("head")
	cfg := policy.Default()
	res := tr.check(GitOptions{Base: "main", Filter: cfg.Filter(), OLM: cfg.Delivery.OLM})
	return caseReport(t, cfg, res.Result, res.Notices, func(f *finding.Finding) {
		side := map[finding.Side]string{finding.Head: "new/", finding.Base: "old/"}[f.Location.Side]
		f.Location.File = side + f.Location.File
		if f.RenamedTo != nil {
			f.RenamedTo.Location.File = "new/" + f.RenamedTo.Location.File
		}
		f.Head = nil // where the review shows it: git mode's own tests cover that
	})
}

// TestRuleCases runs every testdata/rules/<rule>/<case> folder. A case named not-… shows that
// its rule must stay silent there; every other case must produce its rule.
func TestRuleCases(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(casesDir, "*", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no rule cases under %s (%v)", casesDir, err)
	}
	for _, dir := range dirs {
		rule, name := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		t.Run(rule+"/"+name, func(t *testing.T) {
			fs, got := runCase(t, dir)
			wantFile := filepath.Join(dir, "want.json")
			if *update {
				if err := os.WriteFile(wantFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/check -run TestRuleCases -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("findings differ from %s:\n got: %s\nwant: %s", wantFile, got, want)
			}
			fired := false
			for _, f := range fs {
				fired = fired || f.Rule == rule
				assertLocated(t, dir, f)
			}
			if negative := strings.HasPrefix(name, "not-"); fired == negative {
				t.Errorf("rule %s fired=%v in case %s", rule, fired, name)
			}
		})
	}
}

// assertLocated checks that a finding names a line of its file that holds a YAML key or item.
func assertLocated(t *testing.T, dir string, f finding.Finding) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, f.Location.File))
	if err != nil {
		t.Fatalf("%s: location file: %v", f.Rule, err)
	}
	lines := strings.Split(string(data), "\n")
	if f.Location.Line < 1 || f.Location.Line > len(lines) {
		t.Fatalf("%s: line %d outside %s (%d lines)", f.Rule, f.Location.Line, f.Location.File, len(lines))
	}
	want := map[finding.Side]string{finding.Head: "new.yaml", finding.Base: "old.yaml"}[f.Location.Side]
	if strings.Contains(f.Location.File, "/") {
		want = f.Location.File // runGitCase names the side's folder, and the file exists there
	}
	if f.Location.File != want && f.Location.File != "samples.yaml" {
		t.Errorf("%s: side %s but file %s", f.Rule, f.Location.Side, f.Location.File)
	}
	if r := f.RenamedTo; r != nil {
		// The line of the property it was renamed to holds that property's key.
		data, err := os.ReadFile(filepath.Join(dir, r.Location.File))
		if err != nil {
			t.Fatalf("%s: renamedTo file: %v", f.Rule, err)
		}
		lines := strings.Split(string(data), "\n")
		name := r.Path[strings.LastIndex(r.Path, ".")+1:]
		if r.Location.Side != finding.Head || r.Location.Line < 1 || r.Location.Line > len(lines) ||
			strings.TrimSpace(lines[r.Location.Line-1]) != name+":" {
			t.Errorf("%s: renamedTo %s at %+v, not its key", f.Rule, r.Path, r.Location)
		}
	}
}

// TestRuleCasesCoverRegistry: every registered rule has at least one case that fires it.
func TestRuleCasesCoverRegistry(t *testing.T) {
	for _, r := range rules.All() {
		dirs, _ := filepath.Glob(filepath.Join(casesDir, r.ID, "*"))
		positive := 0
		for _, d := range dirs {
			if !strings.HasPrefix(filepath.Base(d), "not-") {
				positive++
			}
		}
		if positive == 0 {
			t.Errorf("rule %s has no case under %s/%s", r.ID, casesDir, r.ID)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(casesDir, "*"))
	for _, d := range dirs {
		if _, ok := rules.Lookup(filepath.Base(d)); !ok {
			t.Errorf("%s: no rule with this ID", d)
		}
	}
}
