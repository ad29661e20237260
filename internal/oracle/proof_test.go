package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/celproof"
	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

var update = flag.Bool("update", false, "rewrite docs/proof.md")

const casesDir = "../../testdata/rules"

// unprovable are rules whose breakage the generic probe cannot show, with the reason; their
// cases are run and documented, but not asserted.
var unprovable = map[string]string{
	"duplicate-crd":                      "two documents in one tree are a repository problem, not a cluster change",
	"unknown-change":                     "fail closed: crdguard reports what it cannot classify as an error because it cannot judge it, not because it is known to break (a labelSelectorPath on a field that may hold a non-string breaks only objects that hold one there, which the probe object does not)",
	"list-map-keys-changed":              "breaks server-side apply merging between field managers; objects themselves stay valid",
	"upstream-default-added":             "the custom resource itself reads back with the default (the probes show it appear), which is the change; what the rule says is that the Pods, Services and volumes a controller builds from it get the same default from the API server when they are created, and this server serves no built-in types",
	"default-respelled":                  "the custom resource reads back with the new spelling (the probes show it change), which is the change; what the rule says is that both spellings are one duration to the Go code that reads the field, and the server does not parse the field",
	"conversion-review-versions-changed": "needs a running conversion webhook to show which ConversionReview version it receives",
	"conversion-webhook-removed":         "needs a running conversion webhook to compare with",
	"conversion-webhook-added":           "needs a running conversion webhook (without one, reads through the other version fail, which is what the rule's doc warns of)",
}

// undecided are cases whose CEL change crdguard can neither prove safe nor refute: it reports
// them as errors because it cannot judge them (fail closed), not because they are known to break.
var undecided = map[string]string{
	"validation-rule-changed/undecided": "fail closed: the rules read an unbounded string, so no finite set of objects proves them equivalent, and no counterexample was found",
}

// v1beta1Only are cases whose old CRD only a v1beta1 API server accepted (a non-structural
// schema: a list without items, which v1beta1 kept for CRDs that prune nothing); the server
// here serves v1 only and refuses to set them up.
var v1beta1Only = map[string]string{
	"field-removed/not-properties-of-a-list":    "the old CRD is rook's v1beta1 cassandra schema with a list without items, which only a v1beta1 API server (Kubernetes 1.21 and before) accepted; this server serves v1 only",
	"list-items-typed/v1beta1-list-gains-items": "the old CRD is a v1beta1 schema with a list without items, which only a v1beta1 API server (Kubernetes 1.21 and before) accepted; this server serves v1 only",
}

// proofCase is one testdata case prepared for the server.
type proofCase struct {
	dir      string
	rule     string
	expected finding.Severity // highest severity crdguard reports for the case
	findings []string
	// example: the object is a witness crdguard showed, which the old CRD must accept and the
	// new one reject.
	example bool
	c       Case
}

func loadProofCases(t *testing.T) []proofCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(casesDir, "*", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	var out []proofCase
	for i, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "old.yaml")); err != nil {
			continue // a git-mode case (old/ and new/ trees): about where files lie, not a cluster
		}
		exp := expectation(t, dir)
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		rule := filepath.Base(filepath.Dir(dir))
		// Every witness crdguard shows is tried as an object of its own, in a CRD of its own.
		for k, ex := range exp.examples {
			group := fmt.Sprintf("c%03de%d.example.com", i, k)
			pc := proofCase{dir: dir, rule: rule, example: true, expected: finding.Error, findings: exp.findings,
				c: Case{Name: name + " (example)", Old: loadRenamed(t, dir, "old.yaml", group), New: loadRenamed(t, dir, "new.yaml", group), Object: regroup(ex, group)}}
			out = append(out, pc)
		}
		// An update's witness: the stored object is created under the old CRD and, after the
		// change, changed into the new one.
		for k, up := range exp.updates {
			group := fmt.Sprintf("c%03du%d.example.com", i, k)
			pc := proofCase{dir: dir, rule: rule, example: true, expected: finding.Error, findings: exp.findings,
				c: Case{Name: name + " (example update)", Old: loadRenamed(t, dir, "old.yaml", group), New: loadRenamed(t, dir, "new.yaml", group),
					Object: regroup(up[0], group), UpdateTo: regroup(up[1], group)}}
			out = append(out, pc)
		}
		objData, err := os.ReadFile(filepath.Join(dir, "object.yaml"))
		if err != nil {
			continue // no object: a case about files, not about a cluster (duplicates, parse errors)
		}
		objs := crd.ParseObjects("object.yaml", objData)
		if len(objs) != 1 {
			t.Fatalf("%s: object.yaml must hold one object", dir)
		}
		group := fmt.Sprintf("c%03d.example.com", i)
		pc := proofCase{dir: dir, rule: rule, expected: exp.max, findings: exp.findings,
			c: Case{Name: name, Old: loadRenamed(t, dir, "old.yaml", group), New: loadRenamed(t, dir, "new.yaml", group), Object: regroup(objs[0].Data, group), Touch: exp.paths,
				NewDoc: document(t, filepath.Join(dir, "new.yaml"))}}
		out = append(out, pc)
	}
	return out
}

// loadRenamed reads one side of a case with its group renamed, so that cases do not collide on
// the server.
func loadRenamed(t *testing.T, dir, name, group string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := crd.Parse(name, data)
	if len(cs) == 0 {
		return nil
	}
	c := cs[0].Object.DeepCopy()
	keepEverywhere(c)
	c.Spec.Group = group
	c.Name = c.Spec.Names.Plural + "." + group
	return c
}

// keepEverywhere turns a v1beta1 CRD's preserveUnknownFields: true (its default), which today's
// API server refuses to create, into what it meant: every object node keeps its unknown fields.
// So a v1beta1 side is set up as the server that served v1beta1 held it.
func keepEverywhere(c *apiextv1.CustomResourceDefinition) {
	if !c.Spec.PreserveUnknownFields {
		return
	}
	c.Spec.PreserveUnknownFields = false
	var keep func(s *apiextv1.JSONSchemaProps)
	keep = func(s *apiextv1.JSONSchemaProps) {
		if s.Type == "object" || s.Type == "" && !s.XIntOrString {
			t := true
			s.XPreserveUnknownFields = &t
		}
		for k, p := range s.Properties {
			keep(&p)
			s.Properties[k] = p
		}
		if s.Items != nil && s.Items.Schema != nil {
			keep(s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			keep(s.AdditionalProperties.Schema)
		}
	}
	for _, v := range c.Spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			keep(v.Schema.OpenAPIV3Schema)
		}
	}
}

// regroup moves an object of example.com to the renamed group.
func regroup(obj map[string]any, group string) map[string]any {
	obj = copyJSON(obj)
	obj["apiVersion"] = strings.Replace(obj["apiVersion"].(string), "example.com/", group+"/", 1)
	return obj
}

// expected is crdguard's verdict on a case with the default policy.
type expected struct {
	// max is the highest severity.
	max finding.Severity
	// findings are the findings at warning or above.
	findings []string
	// paths are the plain property paths they concern.
	paths []string
	// examples are the witnesses the findings carry; updates, those of updates (old, new).
	examples []map[string]any
	updates  [][2]map[string]any
}

// document reads a CRD file as written, keys the API types do not define included.
func document(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := sigsyaml.Unmarshal(data, &doc); err != nil {
		return nil // not one plain document: the typed apply says what it needs to
	}
	return doc
}

// expectation runs crdguard on the case with the default policy.
func expectation(t *testing.T, dir string) expected {
	t.Helper()
	old, err := source.ReadPath(filepath.Join(dir, "old.yaml"), false)
	if err != nil {
		t.Fatal(err)
	}
	new, err := source.ReadPath(filepath.Join(dir, "new.yaml"), false)
	if err != nil {
		t.Fatal(err)
	}
	out := policy.Default().Apply(check.Trees(old, new, rules.Options{}).Findings)
	var exp expected
	for _, f := range out.Findings {
		if f.Severity > exp.max {
			exp.max = f.Severity
		}
		if f.Example != nil {
			var ex map[string]any
			if err := json.Unmarshal(f.Example, &ex); err != nil {
				t.Fatalf("%s: example of %s: %v", dir, f.Rule, err)
			}
			exp.examples = append(exp.examples, ex)
		}
		if u := f.ExampleUpdate; u != nil {
			var up [2]map[string]any
			if json.Unmarshal(u.Old, &up[0]) != nil || json.Unmarshal(u.New, &up[1]) != nil {
				t.Fatalf("%s: update example of %s", dir, f.Rule)
			}
			exp.updates = append(exp.updates, up)
		}
		if f.Severity > finding.Info {
			exp.findings = append(exp.findings, f.Rule+" ("+f.Severity.String()+")")
			if strings.HasPrefix(f.Path, ".spec.") && !strings.ContainsAny(f.Path, "[*") {
				exp.paths = append(exp.paths, f.Path)
			}
		}
	}
	return exp
}

// TestProof runs every rule case through a real CRD API server and checks crdguard's verdict
// against what the server does: a case crdguard calls an error must show a concrete failure or
// data loss; a case it calls safe must show none.
func TestProof(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	cases := loadProofCases(t)
	s := Start(t)
	var cs []Case
	for _, pc := range cases {
		cs = append(cs, pc.c)
	}
	evidence := s.Run(context.Background(), cs)

	var page bytes.Buffer
	k8s := apiextensionsVersion()
	fmt.Fprintf(&page, "# What the API server does with each rule's change\n\nGenerated by `go test ./internal/oracle -run TestProof -update` against k8s.io/apiextensions-apiserver %s (a real CRD API server with embedded etcd, in process). For every case of `testdata/rules`, the old CRD is applied, `object.yaml` is created, the new CRD is applied, and the server is asked: does it accept the change; how does the object read now (and through the other served versions); can it be written back unchanged; what does etcd hold after that write; can the same object be created fresh; can its status be updated. crdguard's verdict is the highest severity it reports for the case.\n", k8s)
	byRule := map[string][]int{}
	var ruleOrder []string
	for i, pc := range cases {
		if _, ok := byRule[pc.rule]; !ok {
			ruleOrder = append(ruleOrder, pc.rule)
		}
		byRule[pc.rule] = append(byRule[pc.rule], i)
	}
	if _, ok := byRule["duplicate-crd"]; !ok {
		ruleOrder = append(ruleOrder, "duplicate-crd")
	}
	for _, rule := range ruleOrder {
		fmt.Fprintf(&page, "\n## %s\n", rule)
		if why, ok := unprovable[rule]; ok {
			fmt.Fprintf(&page, "\nNot provable with these probes: %s.\n", why)
		}
		for _, i := range byRule[rule] {
			pc, ev := cases[i], evidence[i]
			verdict := "safe"
			if pc.expected > finding.Info {
				verdict = strings.Join(pc.findings, ", ")
			}
			fmt.Fprintf(&page, "\n### %s\n\ncrdguard: %s\n\n", pc.c.Name, verdict)
			if why := undecided[pc.c.Name]; why != "" {
				fmt.Fprintf(&page, "Not provable: %s.\n\n", why)
			}
			caseName, _, _ := strings.Cut(pc.c.Name, " (")
			if why := v1beta1Only[caseName]; why != "" {
				fmt.Fprintf(&page, "Not provable here: %s.\n\n", why)
			}
			switch {
			case pc.c.UpdateTo != nil:
				fmt.Fprintf(&page, "Example: changing `%s` to `%s`\n\n", celproof.Short(pc.c.Object), celproof.Short(pc.c.UpdateTo))
			case pc.example:
				fmt.Fprintf(&page, "Example: `%s`\n\n", celproof.Short(pc.c.Object))
			}
			lines := ev.Lines()
			if len(lines) == 0 {
				page.WriteString("The server: nothing failed and nothing was lost.\n")
			}
			for _, l := range lines {
				fmt.Fprintf(&page, "- %s\n", strings.ReplaceAll(l, "\n", " "))
			}
			switch {
			case ev.Setup != "" && v1beta1Only[caseName] != "":
			case v1beta1Only[caseName] != "":
				t.Errorf("%s: listed as refused by a v1-only server, but it was set up", pc.c.Name)
			case ev.Setup != "":
				t.Errorf("%s: the case could not be set up: %s", pc.c.Name, ev.Setup)
			case pc.c.UpdateTo != nil && ev.CRDChange == "" && ev.UpdateTo == "":
				t.Errorf("%s: the server accepts the update after the change: %s to %s", pc.c.Name, celproof.Short(pc.c.Object), celproof.Short(pc.c.UpdateTo))
			case pc.c.UpdateTo != nil:
			case pc.example && ev.CRDChange == "" && ev.Create == "":
				t.Errorf("%s: the server accepts the example after the change: %s", pc.c.Name, celproof.Short(pc.c.Object))
			case pc.example:
			case unprovable[pc.rule] != "" || undecided[pc.c.Name] != "":
			case pc.expected == finding.Error && !ev.Breaks():
				t.Errorf("%s: crdguard reports an error, but the server showed no failure or loss", pc.c.Name)
			case pc.expected == finding.Info && ev.Breaks():
				t.Errorf("%s: crdguard calls it safe, but the server: %s", pc.c.Name, strings.Join(ev.Lines(), "; "))
			}
		}
	}
	if *update {
		if err := os.WriteFile("../../docs/proof.md", page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d cases run through the API server", len(cases))
}

func apiextensionsVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/apiextensions-apiserver" {
				return d.Version
			}
		}
	}
	return "v0.37.2"
}
