package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

var update = flag.Bool("update", false, "rewrite generated files (the rules table of docs/checks.md, docs/rules.md, golden reports)")

const (
	rulesBegin = "<!-- rules:begin -->\n"
	rulesEnd   = "<!-- rules:end -->"
)

// TestReadmeRules keeps the rules table of docs/checks.md (the README's reference for the rules)
// identical to the registry.
func TestReadmeRules(t *testing.T) {
	const path = "../../docs/checks.md"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(readme, []byte(rulesBegin)), bytes.Index(readme, []byte(rulesEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the %q … %q markers", path, rulesBegin, rulesEnd)
	}
	var table bytes.Buffer
	if err := report.Rules(&table, "markdown", rules.All()); err != nil {
		t.Fatal(err)
	}
	current := readme[begin+len(rulesBegin) : end]
	if bytes.Equal(current, table.Bytes()) {
		return
	}
	if !*update {
		t.Fatal("the rules table in docs/checks.md is stale: run go test ./internal/cli -run TestReadmeRules -update")
	}
	out := append(append(append([]byte{}, readme[:begin+len(rulesBegin)]...), table.Bytes()...), readme[end:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGeneratedDocs keeps docs/rules.md, which review comments link to, identical to the registry.
func TestGeneratedDocs(t *testing.T) {
	const path = "../../docs/rules.md"
	var page bytes.Buffer
	if err := report.RulesPage(&page, rules.All(), ruleExamples(t)); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	current, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run TestGeneratedDocs -update)", err)
	}
	if !bytes.Equal(current, page.Bytes()) {
		t.Fatal("docs/rules.md is stale: run go test ./internal/cli -run TestGeneratedDocs -update")
	}
}

// ruleExamples is, for each rule, the diff of its first testdata case that fires it (at most 30
// lines), so the docs show a real before/after.
func ruleExamples(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range rules.All() {
		dirs, _ := filepath.Glob(filepath.Join("../../testdata/rules", r.ID, "*"))
		for _, d := range dirs {
			if strings.HasPrefix(filepath.Base(d), "not-") {
				continue
			}
			old, err1 := os.ReadFile(filepath.Join(d, "old.yaml"))
			new, err2 := os.ReadFile(filepath.Join(d, "new.yaml"))
			if err1 != nil || err2 != nil {
				continue
			}
			lines := strings.SplitAfter(source.UnifiedDiff(old, new), "\n")
			if len(lines) > 31 {
				lines = append(lines[:30], "…\n")
			}
			out[r.ID] = strings.Join(lines, "")
			break
		}
	}
	return out
}
