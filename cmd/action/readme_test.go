package main

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
)

var update = flag.Bool("update", false, "rewrite generated files (README.md's rules table, docs/rules.md)")

const (
	rulesBegin = "<!-- rules:begin -->\n"
	rulesEnd   = "<!-- rules:end -->"
)

// TestReadmeRules keeps the README's rules table identical to the registry.
func TestReadmeRules(t *testing.T) {
	const path = "../../README.md"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(readme, []byte(rulesBegin)), bytes.Index(readme, []byte(rulesEnd))
	if begin < 0 || end < begin {
		t.Fatalf("README.md lacks the %q … %q markers", rulesBegin, rulesEnd)
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
		t.Fatal("the rules table in README.md is stale: run go test ./cmd/action -run TestReadmeRules -update")
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
	if err := report.RulesPage(&page, rules.All()); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	current, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/action -run TestGeneratedDocs -update)", err)
	}
	if !bytes.Equal(current, page.Bytes()) {
		t.Fatal("docs/rules.md is stale: run go test ./cmd/action -run TestGeneratedDocs -update")
	}
}
