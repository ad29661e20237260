package check

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// Hostile input: each case must end, without a panic, in a clear finding or notice. (How fast is
// measured in benchmarks; here it only has to finish within go test's timeout.)

const crdHead = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n"

func compareBytes(t *testing.T, oldData, newData []byte) Result {
	t.Helper()
	o, n := &source.Tree{}, &source.Tree{KeepObjects: true}
	o.AddFile("old.yaml", oldData, true)
	n.AddFile("new.yaml", newData, true)
	return Trees(o, n, rules.Options{})
}

func wantInvalid(t *testing.T, res Result, line int, text string) {
	t.Helper()
	for _, f := range res.Findings {
		if f.Rule == "invalid-crd" && f.Location.Line == line && strings.Contains(f.Message, text) {
			return
		}
	}
	t.Fatalf("no invalid-crd at line %d containing %q in %+v", line, text, res.Findings)
}

func baseCRD(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(casesDir + "/field-added/basic/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestHostileAliasBomb(t *testing.T) {
	var b strings.Builder
	// A definition (group, names, versions), so that it is not taken for a patch.
	b.WriteString(crdHead + "spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  versions: [{name: v1}]\n")
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	// Reported where expansion passes the limit: inside the anchors, not at the end of the file.
	wantInvalid(t, compareBytes(t, baseCRD(t), []byte(b.String())), 9, "alias bomb")
}

func TestHostileDeepNesting(t *testing.T) {
	// A schema 10,000 properties deep.
	var b strings.Builder
	b.WriteString(crdHead + "spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: ")
	for i := 0; i < 10000; i++ {
		b.WriteString("{type: object, properties: {a: ")
	}
	b.WriteString("{type: string}")
	b.WriteString(strings.Repeat("}}", 10000))
	b.WriteString("\n")
	res := compareBytes(t, baseCRD(t), []byte(b.String()))
	wantInvalid(t, res, 14, "exceeded max depth of 10000")
}

func TestHostileHugeFile(t *testing.T) {
	data := bytes.Repeat([]byte("# "+strings.Repeat("x", 98)+"\n"), 1_000_000) // 100 MB
	data = append([]byte(crdHead), data...)
	wantInvalid(t, compareBytes(t, baseCRD(t), data), 1, "larger than the 16 MiB limit")
}

func TestHostileLongLine(t *testing.T) {
	long := strings.Repeat("a very long description ", 400_000) // 9.6 MB on one line
	data := strings.Replace(string(baseCRD(t)), "                type: string\n", "                type: string\n                description: "+long+"\n", 1)
	res := compareBytes(t, baseCRD(t), []byte(data))
	// Not a schema change that breaks anything, but a CRD too large to store or to apply
	// client-side.
	var got []string
	for _, f := range res.Findings {
		if f.Severity > finding.Info {
			got = append(got, f.Rule+" "+f.Severity.String())
		}
	}
	if want := []string{"size-annotation-exceeded warning", "size-storage-exceeded error"}; !slices.Equal(got, want) {
		t.Fatalf("a 9.6 MB description: got %q, want %q", got, want)
	}
	if len(res.Findings) == len(got) {
		t.Fatal("the description change was not seen")
	}
}

func TestHostileManyProperties(t *testing.T) {
	build := func(n int, removed int) []byte {
		var b strings.Builder
		b.WriteString(crdHead + "spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n")
		for i := 0; i < n; i++ {
			if i == removed {
				continue
			}
			fmt.Fprintf(&b, "              f%06d: {type: string}\n", i)
		}
		return []byte(b.String())
	}
	old := build(100_000, -1)
	res := compareBytes(t, old, build(100_000, 4242))
	line := lineOf(old, "f004242:")
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s %s %d", f.Rule, f.Path, f.Location.Line))
	}
	if want := fmt.Sprintf("field-removed .spec.f004242 %d", line); len(got) != 1 || got[0] != want {
		t.Fatalf("findings %v", got)
	}
}

func TestHostileInvalidUTF8(t *testing.T) {
	data := append([]byte(crdHead+"spec:\n  group: "), 0xff, 0xfe, '\n')
	res := compareBytes(t, baseCRD(t), data)
	found := false
	for _, f := range res.Findings {
		found = found || f.Rule == "invalid-crd" && f.CRD == "widgets.example.com"
	}
	if !found {
		t.Fatalf("findings %+v", res.Findings)
	}
}

func TestHostileTooManyDocuments(t *testing.T) {
	data := append(baseCRD(t), bytes.Repeat([]byte("---\nkind: ConfigMap\n"), crd.MaxDocuments+5)...)
	wantInvalid(t, compareBytes(t, baseCRD(t), data), 1, "more than 10000 YAML documents")
}

// A CEL rule built to be expensive is refused by the CRD validation's cost estimate, and a
// pattern built for catastrophic backtracking is harmless: Kubernetes (and crdguard) use Go's
// linear-time regular expressions.
func TestHostileExpensiveRules(t *testing.T) {
	expensive := []byte(strings.Replace(string(baseCRD(t)),
		"            properties:\n", "            x-kubernetes-validations:\n            - rule: self.tags.all(a, self.tags.all(b, self.tags.all(c, self.tags.all(d, a + b + c + d != ''))))\n            properties:\n", 1))
	wantInvalid(t, compareBytes(t, baseCRD(t), expensive), lineOf(expensive, "- rule: self.tags.all"), "estimated rule cost exceeds budget")

	evil := strings.Replace(string(baseCRD(t)), "                type: string\n", "                type: string\n                pattern: ^(a+)+$\n", 1)
	sample := fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  name: %s!\n", strings.Repeat("a", 100_000))
	o, n := &source.Tree{}, &source.Tree{KeepObjects: true}
	o.AddFile("old.yaml", baseCRD(t), true)
	n.AddFile("new.yaml", []byte(evil), true)
	n.AddFile("sample.yaml", []byte(sample), false)
	found := false
	for _, f := range Trees(o, n, rules.Options{}).Findings {
		found = found || f.Rule == "sample-invalid" && strings.Contains(f.Message, "should match")
	}
	if !found {
		t.Fatal("the sample that does not match the pattern was not reported")
	}
}

// The same input gives byte-identical JSON whatever the parallelism.
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	pairs := loadCorpus(t)
	render := func() []byte {
		var all []finding.Finding
		o, n := &source.Tree{}, &source.Tree{}
		var files []source.File
		for i, p := range pairs[:40] {
			files = append(files, source.File{Tree: o, Name: fmt.Sprintf("old/%03d.yaml", i), Data: p.old},
				source.File{Tree: n, Name: fmt.Sprintf("new/%03d.yaml", i), Data: p.new})
		}
		source.AddFiles(files)
		res := Trees(o, n, rules.Options{})
		all = append(all, res.Findings...)
		var buf bytes.Buffer
		if err := report.JSON(&buf, report.Report{Findings: all, CRDs: res.CRDs}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := render()
	runtime.GOMAXPROCS(8)
	eight := render()
	if !bytes.Equal(one, eight) {
		t.Fatal("output differs between GOMAXPROCS 1 and 8")
	}
}

// lineOf is the 1-based line of the first occurrence of text.
func lineOf(data []byte, text string) int {
	i := bytes.Index(data, []byte(text))
	if i < 0 {
		return -1
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}
