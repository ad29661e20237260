package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A pod template type embedded at six paths, in two versions, in two copies of the CRD (a
// bundle beside config/crd, which differ in a comment and a label) lowers one maxLength: the
// text shows it once, counted and collapsed, within 30 lines; the JSON keeps all 12 places of
// one copy under one change ID, each finding naming both copies (issue 46: one finding per
// change, version and path, whatever else differs between copies).
func TestOneChangeManyPlaces(t *testing.T) {
	t.Chdir("../../testdata/report/shared")
	for _, c := range []struct{ format, golden string }{
		{"text", "report.txt"}, {"json", "report.json"}, {"markdown", "report.md"}, {"changelog", "changelog.md"},
		{"verbose", "report-verbose.txt"},
	} {
		args := []string{"diff", "--format", c.format, "old", "new"}
		if c.format == "verbose" {
			args = []string{"diff", "--verbose", "--show-info", "old", "new"}
		}
		code, out, errOut := runCLI(t, args...)
		if code != exitFindings || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", c.format, code, errOut)
		}
		golden(t, c.golden, []byte(out))
		switch c.format {
		case "text":
			if n := strings.Count(out, "\n"); n > 30 {
				t.Errorf("text report has %d lines", n)
			}
		case "json":
			var doc struct {
				Findings []struct {
					Rule, Change string
					Locations    []struct{ File string }
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			places := map[string]int{}
			for _, f := range doc.Findings {
				var files []string
				for _, l := range f.Locations {
					files = append(files, l.File)
				}
				if got := strings.Join(files, " "); got != "new/bundle/widgets.yaml new/config/crd/widgets.yaml" && got != "old/bundle/widgets.yaml old/config/crd/widgets.yaml" {
					t.Errorf("%s finding names the copies %q, want both", f.Rule, got)
				}
				if f.Rule == "max-decreased" {
					places[f.Change]++
				}
			}
			if len(doc.Findings) != 14 || len(places) != 1 {
				t.Errorf("%d findings, max-decreased in changes %v; want 14 findings, 12 of them one change", len(doc.Findings), places)
			}
			for id, n := range places {
				if n != 12 || len(id) != 12 {
					t.Errorf("change %q at %d places, want 12", id, n)
				}
			}
		}
	}
}

// golden compares got with the file of that name in the working directory (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", name, got)
	}
}

// Release notes of real releases (copied from the shared corpus): Flux's Bucket gains v1 and
// deprecates v1beta2 with a warning; Flux's Kustomization drops v1beta2, acknowledged by an
// ignore entry whose reason the notes quote; Gateway API's Gateway adds CEL rules in two versions
// (v0.8.0), and loosens rules in v1.4.0, each named the same way on both sides: by its message
// where both sides share it ("validation rule “IPAddress values must be unique” of .spec.addresses
// was loosened"), else by both expressions, never the old expression beside the new message.
// And folders with samples: one sample file (and its copy) holds a Widget under v1, where the
// schema breaks it, and under v1beta1, a version new in this change, and a Gadget. Every entry
// is under one heading, once: no list item repeats within a CRD's notes.
func TestChangelogGolden(t *testing.T) {
	for _, tc := range []struct{ dir, old, new string }{
		{"flux-buckets-v1.3.0-v1.4.0", "old.yaml", "new.yaml"}, {"flux-kustomizations-v1.7.0-v1.8.0", "old.yaml", "new.yaml"},
		{"gateway-api-gateways-v0.7.0-v0.8.0", "old.yaml", "new.yaml"}, {"gateway-api-gateways-v1.3.0-v1.4.0", "old.yaml", "new.yaml"},
		{"samples-two-versions", "old", "new"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			t.Chdir("../../testdata/changelog/" + tc.dir)
			_, out, errOut := runCLI(t, "diff", "--format", "changelog", tc.old, tc.new)
			if errOut != "" {
				t.Fatalf("stderr %q", errOut)
			}
			golden(t, "changelog.md", []byte(out))
			seen := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "## ") {
					seen = map[string]bool{}
				}
				if strings.HasPrefix(l, "- ") && seen[l] {
					t.Errorf("entry listed twice: %s", l)
				}
				seen[l] = true
			}
		})
	}
}
