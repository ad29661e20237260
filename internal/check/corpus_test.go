package check

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// corpusPair is one real CRD upgrade from ../shared/corpus.
type corpusPair struct {
	name     string
	old, new []byte
}

// corpusDir is where the shared corpus lives relative to this package; CRDGUARD_CORPUS
// overrides it.
func corpusDir() string {
	if d := os.Getenv("CRDGUARD_CORPUS"); d != "" {
		return d
	}
	return "../../../shared/corpus"
}

// corpusMoreDir is the second corpus (cert-manager's Helm chart CRDs among them);
// CRDGUARD_CORPUS_MORE overrides it.
func corpusMoreDir() string {
	if d := os.Getenv("CRDGUARD_CORPUS_MORE"); d != "" {
		return d
	}
	return "../../../shared/corpus-more"
}

func loadCorpus(tb testing.TB) []corpusPair {
	tb.Helper()
	return loadCorpusAt(tb, corpusDir())
}

func loadCorpusAt(tb testing.TB, root string) []corpusPair {
	tb.Helper()
	f, err := os.Open(filepath.Join(root, "pairs.tsv"))
	if err != nil {
		tb.Skipf("corpus not available: %v", err)
	}
	defer f.Close()
	var pairs []corpusPair
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 4 {
			continue
		}
		dir := filepath.Join(root, c[0], c[1], c[2]+"__"+c[3])
		old, err1 := os.ReadFile(filepath.Join(dir, "old.yaml"))
		new, err2 := os.ReadFile(filepath.Join(dir, "new.yaml"))
		if err1 != nil || err2 != nil {
			tb.Fatalf("pair %s: %v %v", dir, err1, err2)
		}
		pairs = append(pairs, corpusPair{name: strings.Join(c[:4], " "), old: old, new: new})
	}
	if len(pairs) == 0 {
		tb.Fatal("corpus lists no pairs")
	}
	return pairs
}

func comparePair(p corpusPair) Result {
	old, new := &source.Tree{}, &source.Tree{}
	old.AddFile("old.yaml", p.old, true)
	new.AddFile("new.yaml", p.new, true)
	return Trees(old, new, rules.Options{})
}

func TestCorpus(t *testing.T) {
	for _, root := range []string{corpusDir(), corpusMoreDir()} {
		t.Run(filepath.Base(root), func(t *testing.T) { testCorpus(t, loadCorpusAt(t, root)) })
	}
}

func testCorpus(t *testing.T, pairs []corpusPair) {
	descOnly, unknown := 0, 0
	for _, p := range pairs {
		res := comparePair(p)
		var first, second bytes.Buffer
		if err := report.JSON(&first, report.Report{Findings: res.Findings, CRDs: res.CRDs}); err != nil {
			t.Fatal(err)
		}
		again := comparePair(p)
		_ = report.JSON(&second, report.Report{Findings: again.Findings, CRDs: again.CRDs})
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("%s: output differs between two runs", p.name)
		}
		lines := map[string]int{"old.yaml": bytes.Count(p.old, []byte("\n")) + 1, "new.yaml": bytes.Count(p.new, []byte("\n")) + 1}
		for _, f := range res.Findings {
			if f.Location.Line < 1 || f.Location.Line > lines[f.Location.File] {
				t.Errorf("%s: %s %s at %s:%d outside the file", p.name, f.Rule, f.Path, f.Location.File, f.Location.Line)
			}
			if f.Rule == "invalid-crd" {
				t.Errorf("%s: real CRD reported invalid: %s", p.name, f.Message)
			}
			if f.Rule == "unknown-change" {
				unknown++
			}
		}
		if onlyDocsDiffer(t, p) {
			descOnly++
			for _, f := range res.Findings {
				if f.Severity > finding.Info || f.Rule == "unknown-change" {
					t.Errorf("%s: only documentation differs, but %s %s %s: %s", p.name, f.Severity, f.Rule, f.Path, f.Message)
				}
			}
		}
	}
	t.Logf("%d pairs, %d differ only in documentation or metadata, %d unknown-change findings", len(pairs), descOnly, unknown)
	if descOnly == 0 {
		t.Error("expected some documentation-only pairs in the corpus")
	}
}

// onlyDocsDiffer decodes both sides independently of the rules and compares their specs with
// every schema documentation keyword cleared.
func onlyDocsDiffer(t *testing.T, p corpusPair) bool {
	t.Helper()
	o, _ := crd.Parse("old.yaml", p.old)
	n, _ := crd.Parse("new.yaml", p.new)
	if len(o) != 1 || len(n) != 1 {
		t.Fatalf("%s: want one CRD a side, got %d and %d", p.name, len(o), len(n))
	}
	os, ns := o[0].Object.Spec.DeepCopy(), n[0].Object.Spec.DeepCopy()
	for _, s := range []*apiextv1.CustomResourceDefinitionSpec{os, ns} {
		for i := range s.Versions {
			if s.Versions[i].Schema != nil {
				stripDocs(s.Versions[i].Schema.OpenAPIV3Schema)
			}
		}
	}
	return reflect.DeepEqual(os, ns)
}

func stripDocs(s *apiextv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Description, s.Title, s.Example, s.ExternalDocs = "", "", nil, nil
	for k, v := range s.Properties {
		stripDocs(&v)
		s.Properties[k] = v
	}
	if s.Items != nil {
		stripDocs(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		stripDocs(s.AdditionalProperties.Schema)
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			stripDocs(&list[i])
		}
	}
	stripDocs(s.Not)
}

func corpusBytes(pairs []corpusPair) int64 {
	var n int64
	for _, p := range pairs {
		n += int64(len(p.old) + len(p.new))
	}
	return n
}

// BenchmarkCorpus decodes and compares every pair of the shared corpus per iteration.
func BenchmarkCorpus(b *testing.B) {
	pairs := loadCorpus(b)
	b.SetBytes(corpusBytes(pairs))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pairs {
			comparePair(p)
		}
	}
	b.ReportMetric(float64(len(pairs)*b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// BenchmarkLargestPair is the single biggest pair of the corpus.
func BenchmarkLargestPair(b *testing.B) {
	pairs := loadCorpus(b)
	largest := pairs[0]
	for _, p := range pairs {
		if len(p.old)+len(p.new) > len(largest.old)+len(largest.new) {
			largest = p
		}
	}
	b.Logf("largest pair: %s (%d bytes)", largest.name, len(largest.old)+len(largest.new))
	b.SetBytes(corpusBytes([]corpusPair{largest}))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		comparePair(largest)
	}
}
