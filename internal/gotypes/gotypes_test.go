package gotypes

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// memTree is a tree of files in memory.
type memTree map[string]string

func (m memTree) Names() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (m memTree) Read(name string) ([]byte, error) {
	s, ok := m[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return []byte(s), nil
}

// operator has the shapes real projects have: the types in a module of their own (api/go.mod),
// one folder per group and version, a kind's types split over files, a generated file that
// must not be read, a struct shared inline by two kinds from another package of the module,
// aliases, pointers, slices, maps, type-level and items markers, and another module's types.
var operator = memTree{
	"go.mod":     "module example.com/op\n\ngo 1.22\n\nrequire example.com/op-api v0.0.0\n",
	"api/go.mod": "module \"example.com/op-api\" // the API module\n\ngo 1.22\n",
	"api/apps/v1alpha1/doc.go": `// +kubebuilder:object:generate=true
// +groupName=apps.example.com
package v1alpha1
`,
	"api/apps/v1alpha1/foo_types.go": `package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/op-api/shared"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Foo is a kind.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() < 64",message="short"
type Foo struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec FooSpec ` + "`json:\"spec\"`" + `
}

// +kubebuilder:object:root=true
type Bar struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	Spec BarSpec ` + "`json:\"spec\"`" + `
}

// BarSpec shares the common part.
type BarSpec struct {
	shared.Common ` + "`json:\",inline\"`" + `
}

// Template is another module's type.
type Template struct {
	// +optional
	Pod *corev1.PodTemplateSpec ` + "`json:\"pod,omitempty\"`" + `

	// Gateway API writes a validation per release channel.
	// <gateway:experimental:validation:XValidation:message="one",rule="self.size() == 1">
	// <gateway:experimental>
	Ports []Port ` + "`json:\"ports\"`" + `

	// An embedded type with a json name is an ordinary property.
	shared.Common ` + "`json:\"common\"`" + `
}
`,
	"api/apps/v1alpha1/foo_spec.go": `package v1alpha1

import (
	"example.com/op-api/shared"
	"example.com/op/pkg/limits"
)

// FooSpec is declared in a file of its own.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="min above max"
// +kubebuilder:validation:XValidation:rule=` + "`has(self.mode)`" + `,message="mode, please"
type FooSpec struct {
	shared.Common ` + "`json:\",inline\"`" + `

	// +kubebuilder:validation:items:MaxLength=10
	// +kubebuilder:validation:MaxItems=5
	Tags []string ` + "`json:\"tags,omitempty\"`" + `

	Labels map[string]Label ` + "`json:\"labels,omitempty\"`" + `

	Ports []*Port ` + "`json:\"ports\"`" + `

	// +required
	Mode Mode ` + "`json:\"mode\"`" + `

	Min, Max int32 ` + "`json:\",omitempty\"`" + `

	Template Template ` + "`json:\"template\"`" + `

	Limits limits.Limits ` + "`json:\"limits\"`" + `

	internal string
	Skipped  string ` + "`json:\"-\"`" + `
}

// +kubebuilder:validation:Pattern=` + "`^[a-z]+$`" + `
type Label string

// Mode is an enum declared once.
// +kubebuilder:validation:Enum=Fast;Slow
type Mode string

type Port = PortSpec

type PortSpec struct {
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	Number int32 ` + "`json:\"number\"`" + `
	Name   string ` + "`json:\"name\"`" + `
}
`,
	"api/apps/v1alpha1/zz_generated.deepcopy.go": "package v1alpha1\n\n// FooSpec would hide the real one.\ntype FooSpec struct{}\n",
	"api/shared/common.go": `package shared

// Common is embedded by every kind.
type Common struct {
	// Owner names who runs it.
	// +kubebuilder:validation:MaxLength=63
	Owner string ` + "`json:\"owner,omitempty\"`" + `
}
`,
	"pkg/limits/limits.go": `package limits

// Limits lives in the root module.
type Limits struct {
	// +kubebuilder:validation:Maximum=100
	CPU int ` + "`json:\"cpu\"`" + `
}
`,
	// A group whose package folder is not a version: the version comes from GroupVersion.
	"api/widgets/groupversion_info.go": `// +groupName=widgets.example.com
package widgets

import "k8s.io/apimachinery/pkg/runtime/schema"

var GroupVersion = schema.GroupVersion{Group: "widgets.example.com", Version: "v2"}
`,
	"api/widgets/widget_types.go": `package widgets

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type Widget struct {
	Size int ` + "`json:\"size\"`" + `
}
`,
	// A test group whose version variable has another name.
	"util/builder/doc.go": "// +groupName=test.example.com\npackage builder\n",
	"util/builder/types.go": `package builder

var GroupVersion = schema.GroupVersion{Group: "test.example.com", Version: "v1"}

var TestGroupVersion = schema.GroupVersion{Group: "test.example.com", Version: "v1alpha1"}

// +kubebuilder:object:root=true
type Phase struct{}
`,
	// Two packages that claim one group and version: no guess.
	"api/dup/a/v1/doc.go":    "// +groupName=dup.example.com\npackage v1\n\n// +kubebuilder:object:root=true\ntype Dup struct{}\n",
	"api/dup/b/v1/doc.go":    "// +groupName=dup.example.com\npackage v1\n\n// +kubebuilder:object:root=true\ntype Dup struct{}\n",
	"vendor/x/v1/doc.go":     "// +groupName=apps.example.com\npackage v1alpha1\n",
	"testdata/v1alpha1/a.go": "// +groupName=apps.example.com\npackage v1alpha1\n",
}

var crds = map[string]CRD{
	"foos.apps.example.com":       {Group: "apps.example.com", Kind: "Foo"},
	"bars.apps.example.com":       {Group: "apps.example.com", Kind: "Bar"},
	"widgets.widgets.example.com": {Group: "widgets.example.com", Kind: "Widget"},
	"phases.test.example.com":     {Group: "test.example.com", Kind: "Phase"},
	"dups.dup.example.com":        {Group: "dup.example.com", Kind: "Dup"},
}

func TestMap(t *testing.T) {
	const spec, types, common = "api/apps/v1alpha1/foo_spec.go", "api/apps/v1alpha1/foo_types.go", "api/shared/common.go"
	for _, tc := range []struct {
		name                   string
		crd, version, rule     string
		path, message, subject string
		want                   string // file:line, "" when unmapped
	}{
		{"marker on a field inlined from another package", "foos.apps.example.com", "v1alpha1", "max-decreased", ".spec.owner", "maxLength of .spec.owner changed from 64 to 63", "", common + ":6"},
		{"the same struct inlined by another kind", "bars.apps.example.com", "v1alpha1", "max-added", ".spec.owner", "maxLength of .spec.owner set to 63", "", common + ":6"},
		{"field without the keyword's marker", "bars.apps.example.com", "v1alpha1", "min-added", ".spec.owner", "minLength of .spec.owner set to 1", "", common + ":7"},
		{"items marker of a slice field", "foos.apps.example.com", "v1alpha1", "max-added", ".spec.tags[*]", "maxLength of .spec.tags[*] set to 10", "", spec + ":14"},
		{"the slice's own marker", "foos.apps.example.com", "v1alpha1", "max-decreased", ".spec.tags", "maxItems of .spec.tags changed from 6 to 5", "", spec + ":15"},
		{"type marker of a map's values", "foos.apps.example.com", "v1alpha1", "pattern-added", ".spec.labels.*", "pattern added", "", spec + ":35"},
		{"map values without a marker point at the map", "foos.apps.example.com", "v1alpha1", "type-changed", ".spec.labels.*", "type changed", "", spec + ":18"},
		{"through a pointer and an alias", "foos.apps.example.com", "v1alpha1", "default-changed", ".spec.ports[*].number", "default changed", "", spec + ":45"},
		{"alias field without marker", "foos.apps.example.com", "v1alpha1", "field-removed", ".spec.ports[*].name", "removed", "", spec + ":48"},
		{"enum on the named type", "foos.apps.example.com", "v1alpha1", "enum-value-removed", ".spec.mode", "Medium removed", "", spec + ":39"},
		{"required marker", "foos.apps.example.com", "v1alpha1", "required-added", ".spec.mode", "now required", "", spec + ":22"},
		{"required without a marker: the field", "foos.apps.example.com", "v1alpha1", "required-added", ".spec.ports", "now required", "", spec + ":20"},
		{"fields without a json name", "foos.apps.example.com", "v1alpha1", "field-added", ".spec.Max", "added", "", spec + ":25"},
		{"CEL rule picked by its text", "foos.apps.example.com", "v1alpha1", "validation-rule-added", ".spec", "rule added", "has(self.mode)", spec + ":10"},
		{"CEL rule of the kind", "foos.apps.example.com", "v1alpha1", "validation-rule-changed", ".", "rule changed", "self.metadata.name.size() < 64", types + ":14"},
		{"CEL rule not in the Go types: the field", "foos.apps.example.com", "v1alpha1", "validation-rule-added", ".spec", "rule added", "true", types + ":18"},
		{"inline type of another module", "foos.apps.example.com", "v1alpha1", "field-removed", ".apiVersion", "removed", "", types + ":16"},
		{"another module's type ends the walk", "foos.apps.example.com", "v1alpha1", "max-added", ".spec.template.pod.spec.containers[*].name", "maxLength of x set to 3", "", types + ":35"},
		{"subresource marker", "foos.apps.example.com", "v1alpha1", "subresource-removed", "", "status subresource removed", "", types + ":11"},
		{"version-level without a marker: the kind", "foos.apps.example.com", "v1alpha1", "version-removed", "", "removed", "", types + ":15"},
		{"version from GroupVersion", "widgets.widgets.example.com", "v2", "storage-version-changed", "", "storage moved", "", "api/widgets/widget_types.go:4"},
		{"a package of the root module", "foos.apps.example.com", "v1alpha1", "max-decreased", ".spec.limits.cpu", "maximum of .spec.limits.cpu changed from 200 to 100", "", "pkg/limits/limits.go:5"},
		{"embedded with a json name", "foos.apps.example.com", "v1alpha1", "max-added", ".spec.template.common.owner", "maxLength of x set to 63", "", common + ":6"},
		{"embedded with a json name is not inline", "foos.apps.example.com", "v1alpha1", "field-removed", ".spec.template.owner", "removed", "", ""},
		{"a release channel's marker", "foos.apps.example.com", "v1alpha1", "validation-rule-added", ".spec.template.ports", "rule added", "self.size() == 1", types + ":38"},
		{"a package with kinds of two versions", "phases.test.example.com", "v1alpha1", "version-removed", "", "removed", "", "util/builder/types.go:8"},
		{"a path the types lack", "foos.apps.example.com", "v1alpha1", "field-removed", ".spec.nothing", "removed", "", ""},
		{"unexported and json:\"-\" fields are not properties", "foos.apps.example.com", "v1alpha1", "field-removed", ".spec.Skipped", "removed", "", ""},
		{"unknown version", "foos.apps.example.com", "v1", "field-removed", ".spec.mode", "removed", "", ""},
		{"two packages claim the group and version", "dups.dup.example.com", "v1", "version-removed", "", "removed", "", ""},
		{"not a generated CRD", "other.example.com", "v1", "field-removed", ".spec", "removed", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := []finding.Finding{{Rule: tc.rule, CRD: tc.crd, Version: tc.version, Path: tc.path, Message: tc.message, Subject: tc.subject,
				Location: finding.Location{File: "crd.yaml", Line: 1, Side: finding.Head}}}
			Map(fs, crds, nil, sourcesOf(operator))
			got := ""
			if s := fs[0].Source; s != nil {
				if s.Side != finding.Head {
					t.Errorf("side %s", s.Side)
				}
				got = fmt.Sprintf("%s:%d", s.File, s.Line)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q\n%s", got, tc.want, numbered(operator, tc.want, got))
			}
		})
	}
}

// numbered shows the lines a failing case named, to fix the table quickly.
func numbered(tree memTree, locs ...string) string {
	var b strings.Builder
	for _, loc := range locs {
		file, line, ok := strings.Cut(loc, ":")
		if !ok {
			continue
		}
		lines := strings.Split(tree[file], "\n")
		var n int
		fmt.Sscan(line, &n)
		if n >= 1 && n <= len(lines) {
			fmt.Fprintf(&b, "%s: %s\n", loc, lines[n-1])
		}
	}
	return b.String()
}

// A removal maps to the base tree, on the base side; a change to head. Stats count what was
// eligible, mapped, and mapped only as far as another module's type.
func TestMapSidesAndStats(t *testing.T) {
	base := memTree{}
	for k, v := range operator {
		base[k] = v
	}
	base["api/shared/common.go"] = strings.Replace(operator["api/shared/common.go"], "// Owner names who runs it.\n", "// Owner names who runs it.\n\t// Team too.\n", 1)
	fs := []finding.Finding{
		{Rule: "field-removed", CRD: "bars.apps.example.com", Version: "v1alpha1", Path: ".spec.owner", Location: finding.Location{Side: finding.Base}},
		{Rule: "max-added", CRD: "bars.apps.example.com", Version: "v1alpha1", Path: ".spec.owner", Message: "maxLength of .spec.owner set to 63", Location: finding.Location{Side: finding.Head}},
		{Rule: "field-removed", CRD: "foos.apps.example.com", Version: "v1alpha1", Path: ".spec.template.pod.spec", Location: finding.Location{Side: finding.Head}},
		{Rule: "field-removed", CRD: "bars.apps.example.com", Version: "v1alpha1", Path: ".spec.owner", Baseline: "v1.0.0", Location: finding.Location{Side: finding.Base}},
		{Rule: "sample-invalid", CRD: "bars.apps.example.com", Version: "v1alpha1", Path: ".spec.owner", Location: finding.Location{Side: finding.Head}},
		{Rule: "crd-removed", CRD: "bars.apps.example.com", Location: finding.Location{Side: finding.Base}},
	}
	st := Map(fs, crds, sourcesOf(base), sourcesOf(operator))
	if st != (Stats{Eligible: 3, Mapped: 3, Partial: 1}) {
		t.Errorf("stats %+v", st)
	}
	var got []string
	for _, f := range fs {
		if f.Source == nil {
			got = append(got, "-")
			continue
		}
		got = append(got, fmt.Sprintf("%s:%d:%s", f.Source.File, f.Source.Line, f.Source.Side))
	}
	want := "api/shared/common.go:8:base api/shared/common.go:6:head api/apps/v1alpha1/foo_types.go:35:head - - -"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestSplitPath(t *testing.T) {
	for in, want := range map[string]string{
		".":                    "",
		".spec.size":           "spec/size",
		".spec.ports[*].name":  "spec/ports/[*]/name",
		".spec.labels.*":       "spec/labels/.*",
		".spec.labels.*.a":     "spec/labels/.*/a",
		`.spec["a.b"].c`:       "spec/a.b/c",
		`.spec["*"]`:           "spec/*",
		".spec.matrix[*][*].x": "spec/matrix/[*]/[*]/x",
		`.spec["unterminated`:  "error",
	} {
		segs, ok := splitPath(in)
		var parts []string
		for _, s := range segs {
			switch {
			case s.items:
				parts = append(parts, "[*]")
			case s.values:
				parts = append(parts, ".*")
			default:
				parts = append(parts, s.name)
			}
		}
		got := strings.Join(parts, "/")
		if !ok {
			got = "error"
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestXValidationRule(t *testing.T) {
	for in, want := range map[string]string{
		`kubebuilder:validation:XValidation:rule="self.a == 'x'",message="a, b"`: "self.a == 'x'",
		`kubebuilder:validation:XValidation:message="a, b",rule="self.b"`:        "self.b",
		"kubebuilder:validation:XValidation:rule=`self.c \"q\"`":                 `self.c "q"`,
		`kubebuilder:validation:XValidation:rule=self.d,message=m`:               "self.d",
		`kubebuilder:validation:XValidation:message="only"`:                      "",
	} {
		if got := xvalidationRule(in); got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
}

// sourcesOf is a side's Go sources held in memory.
func sourcesOf(tree Tree) *Types {
	return NewTypes(func() (Tree, error) { return tree, nil })
}
