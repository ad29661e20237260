package gotypes

import (
	"errors"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// refs declares references every way a project writes them: k8s.io/api's type by pointer,
// in a list, in a map, through an alias and a defined type of the project, and look-alikes
// that are not k8s.io/api's (another module's type of the same name, the project's own).
var refs = memTree{
	"go.mod": "module example.com/refs\n",
	"api/v1/types.go": `// +groupName=refs.example.com
package v1

import (
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Alias = corev1.LocalObjectReference

type Defined corev1.SecretKeySelector

type LocalObjectReference struct {
	Name string ` + "`json:\"name\"`" + `
}

// +kubebuilder:object:root=true
type Ref struct {
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec RefSpec ` + "`json:\"spec\"`" + `
}

type RefSpec struct {
	Secret   *corev1.LocalObjectReference            ` + "`json:\"secret,omitempty\"`" + `
	Secrets  []corev1.LocalObjectReference           ` + "`json:\"secrets\"`" + `
	ByName   map[string]*corev1.LocalObjectReference ` + "`json:\"byName\"`" + `
	Alias    Alias                                   ` + "`json:\"alias\"`" + `
	Defined  *Defined                                ` + "`json:\"defined\"`" + `
	Flux     meta.LocalObjectReference               ` + "`json:\"flux\"`" + `
	Own      LocalObjectReference                    ` + "`json:\"own\"`" + `
	Selector *metav1.LabelSelector                   ` + "`json:\"selector\"`" + `
	Template corev1.PodTemplateSpec                  ` + "`json:\"template\"`" + `
	Names    []string                                ` + "`json:\"names\"`" + `
}

// Plain has no root marker: controller-gen takes it for a kind because it embeds TypeMeta and
// ObjectMeta (argo-workflows' kinds).
type Plain struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec RefSpec ` + "`json:\"spec\"`" + `
}

// Half embeds ObjectMeta only: no kind.
type Half struct {
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec RefSpec ` + "`json:\"spec\"`" + `
}
`,
}

func TestTypesBuiltin(t *testing.T) {
	types := NewTypes(func() (Tree, error) { return refs, nil })
	for _, tc := range []struct{ kind, path, want string }{
		{"Ref", ".spec.secret", "core/v1.LocalObjectReference"},
		{"Ref", ".spec.secrets[*]", "core/v1.LocalObjectReference"},
		{"Ref", ".spec.byName.*", "core/v1.LocalObjectReference"},
		{"Ref", ".spec.alias", "core/v1.LocalObjectReference"},
		{"Ref", ".spec.defined", "core/v1.SecretKeySelector"},
		{"Ref", ".spec.selector", "meta/v1.LabelSelector"},
		{"Ref", ".metadata", "meta/v1.ObjectMeta"},
		{"Ref", ".spec.template", "core/v1.PodTemplateSpec"},
		// Below another module's type the repository has no field: the parent's place names it.
		{"Ref", ".spec.template.spec", ""},
		{"Ref", ".spec.flux", ""},
		{"Ref", ".spec.own", ""},
		{"Ref", ".spec", ""},
		{"Ref", ".spec.secrets", ""},
		{"Ref", ".spec.names[*]", ""},
		{"Ref", ".spec.missing", ""},
		{"Ref", ".", ""},
		{"Other", ".spec.secret", ""},
		{"Plain", ".spec.secrets[*]", "core/v1.LocalObjectReference"},
		{"Half", ".spec.secrets[*]", ""},
	} {
		if got := types.Builtin("refs.example.com", "v1", tc.kind, tc.path); got != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.kind, tc.path, got, tc.want)
		}
	}
	if got := types.Builtin("other.example.com", "v1", "Ref", ".spec.secret"); got != "" {
		t.Errorf("another group: got %q", got)
	}
	opened := 0
	none := NewTypes(func() (Tree, error) { opened++; return nil, errors.New("no commit") })
	for _, path := range []string{".spec.secret", ".spec.alias"} {
		if got := none.Builtin("refs.example.com", "v1", "Ref", path); got != "" {
			t.Errorf("unreadable sources: got %q", got)
		}
	}
	if opened != 1 {
		t.Errorf("sources opened %d times, want once", opened)
	}
}

// TestTypesReadOnce: the rules' questions, the placement of findings (Map) and the files for
// the diff (Sources) read one side's Go sources once.
func TestTypesReadOnce(t *testing.T) {
	opened := 0
	side := NewTypes(func() (Tree, error) { opened++; return operator, nil })
	side.Builtin("apps.example.com", "v1alpha1", "Foo", ".spec.owner")
	fs := []finding.Finding{{Rule: "max-added", CRD: "bars.apps.example.com", Version: "v1alpha1", Path: ".spec.owner", Message: "maxLength of .spec.owner set to 63", Location: finding.Location{Side: finding.Head}}}
	if st := Map(fs, crds, nil, side); st.Mapped != 1 {
		t.Errorf("Map placed %d findings, want 1", st.Mapped)
	}
	if tree, err := side.Sources(); err != nil || tree == nil {
		t.Errorf("Sources() = %v, %v", tree, err)
	}
	if opened != 1 {
		t.Errorf("the sources were read %d times, want once", opened)
	}
}
