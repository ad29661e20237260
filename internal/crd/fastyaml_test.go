package crd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// parseV3 is the reference: every document as yaml.v3 parses it.
func parseV3(data []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// sameTree compares what crdguard reads of a node: kind, tag, style, value, position, children.
func sameTree(a, b *yaml.Node, path string) error {
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || a.Line != b.Line || a.Column != b.Column ||
		(a.Kind == yaml.ScalarNode && a.Style&^yaml.TaggedStyle != b.Style&^yaml.TaggedStyle) || len(a.Content) != len(b.Content) {
		return fmt.Errorf("%s: fast {kind %d tag %s style %d line %d col %d value %q children %d} v3 {kind %d tag %s style %d line %d col %d value %q children %d}",
			path, a.Kind, a.ShortTag(), a.Style, a.Line, a.Column, a.Value, len(a.Content), b.Kind, b.ShortTag(), b.Style, b.Line, b.Column, b.Value, len(b.Content))
	}
	for i := range a.Content {
		if err := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func checkFast(t *testing.T, name string, data []byte) bool {
	t.Helper()
	fast, ok := parseFast(data)
	if !ok {
		return false
	}
	ref, err := parseV3(data)
	if err != nil {
		t.Fatalf("%s: the fast parser accepted what yaml.v3 refuses: %v", name, err)
	}
	docs := meaningful(ref)
	if len(fast) != len(docs) {
		t.Fatalf("%s: %d documents, yaml.v3 %d", name, len(fast), len(docs))
	}
	for i := range fast {
		if err := sameTree(fast[i].Content[0], docs[i].Content[0], name); err != nil {
			t.Fatal(err)
		}
	}
	return true
}

func TestFastYAMLMatchesV3(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*/*/*.yaml")
	more, _ := filepath.Glob("../../testdata/*/*/*/*.yaml")
	more2, _ := filepath.Glob("../../testdata/*/*.yaml")
	files = append(append(files, more...), more2...)
	fast := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if checkFast(t, f, data) {
			fast++
		}
	}
	t.Logf("%d of %d files parsed by the fast path, identical to yaml.v3", fast, len(files))
}

// FuzzFastYAML: whatever the fast parser accepts, yaml.v3 parses to the same trees.
func FuzzFastYAML(f *testing.F) {
	addSeeds(f, "../../testdata/rules/*/*/*.yaml", "../../testdata/crd/*.yaml", "../../testdata/examples/*/*.yaml")
	for _, s := range []string{"a: b\n", "a:\n- b\n- c: d\n  e: f\n", "k: 'x\n  y'\n", "k: \"a\\tb\"\n", "k: |-\n  x\n\n  y\n", "k: [a, b]\n", "k: {}\n", "k: plain\n  folded\n\n  more\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := parseFast(data)
		if !ok {
			return
		}
		ref, err := parseV3(data)
		if err != nil {
			t.Fatalf("the fast parser accepted what yaml.v3 refuses: %v", err)
		}
		docs := meaningful(ref)
		if len(fast) != len(docs) {
			t.Fatalf("%d documents, yaml.v3 %d", len(fast), len(docs))
		}
		for i := range fast {
			if err := sameTree(fast[i].Content[0], docs[i].Content[0], "doc"); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// meaningful drops empty documents (a lone "---"), which crdguard skips whichever parser read them.
func meaningful(docs []*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, d := range docs {
		if len(d.Content) > 0 && !(d.Content[0].Kind == yaml.ScalarNode && d.Content[0].ShortTag() == "!!null" && d.Content[0].Value == "") {
			out = append(out, d)
		}
	}
	return out
}
