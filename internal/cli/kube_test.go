package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/oracle"
)

// TestDiffAgainstCluster: with kube://NAME as the old side, the cluster's status.storedVersions
// decides stored-version-removed — before and after a storage migration.
func TestDiffAgainstCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	s := oracle.Start(t)
	kubeconfig := s.Kubeconfig(t)
	ctx := context.Background()
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()

	schemaOf := func() *apiextv1.CustomResourceValidation {
		return &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}
	}
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names:    apiextv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true, Schema: schemaOf()}},
		},
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, s, crd.Name)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": map[string]any{"size": int64(1)}}}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}
	if _, err := s.Dynamic.Resource(gvr).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// v1 becomes the storage version; v1alpha1 stays in status.storedVersions.
	cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{
		{Name: "v1alpha1", Served: true, Storage: false, Schema: schemaOf()},
		{Name: "v1", Served: true, Storage: true, Schema: schemaOf()},
	}
	if cur, err = crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The file drops v1alpha1.
	head := cur.DeepCopy()
	head.Spec.Versions = head.Spec.Versions[1:]
	head.Status, head.ObjectMeta = apiextv1.CustomResourceDefinitionStatus{}, metav1.ObjectMeta{Name: crd.Name}
	head.APIVersion, head.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	data, err := yaml.Marshal(head)
	if err != nil {
		t.Fatal(err)
	}
	newFile := filepath.Join(t.TempDir(), "widgets.yaml")
	if err := os.WriteFile(newFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	diff := func() (int, string) {
		code, out, stderr := runCLI(t, "diff", "--kubeconfig", kubeconfig, "kube://"+crd.Name, newFile)
		if stderr != "" {
			t.Fatalf("stderr: %s", stderr)
		}
		return code, out
	}
	code, out := diff()
	if code != 1 || !strings.Contains(out, "stored-version-removed") || !strings.Contains(out, "kube://widgets.example.com:") {
		t.Fatalf("before migration: exit %d\n%s", code, out)
	}

	// Git mode: the files never say v1alpha1 was stored; the cluster does.
	repo := gittest.New(t)
	base := cur.DeepCopy()
	base.Status, base.ObjectMeta = apiextv1.CustomResourceDefinitionStatus{}, metav1.ObjectMeta{Name: crd.Name}
	base.APIVersion, base.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	baseData, err := yaml.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	repo.Write("config/crd/widgets.yaml", baseData)
	repo.Branch("main", repo.Commit("base"))
	repo.Write("config/crd/widgets.yaml", data)
	repo.Commit("drop v1alpha1")
	_, out, _ = runCLI(t, "check", "--repo", repo.Dir, "--base", "main")
	if strings.Contains(out, "stored-version-removed") || !strings.Contains(out, "served-version-removed") {
		t.Fatalf("check without --cluster:\n%s", out)
	}
	_, out, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "main", "--cluster", "--kubeconfig", kubeconfig)
	if !strings.Contains(out, "stored-version-removed") {
		t.Fatalf("check --cluster:\n%s\n%s", out, stderr)
	}

	// Storage migration done: only v1 holds data now.
	cur, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.StoredVersions = []string{"v1"}
	if _, err := crds.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out = diff()
	if strings.Contains(out, "stored-version-removed") || !strings.Contains(out, "served-version-removed") || code != 1 {
		t.Fatalf("after migration: exit %d\n%s", code, out)
	}

	// Clear errors for a CRD that is not installed and an unreachable cluster.
	if code, _, stderr := runCLI(t, "diff", "--kubeconfig", kubeconfig, "kube://gadgets.example.com", newFile); code != 2 || !strings.Contains(stderr, "CRD gadgets.example.com is not installed") {
		t.Fatalf("missing CRD: exit %d, %s", code, stderr)
	}
	bad := filepath.Join(t.TempDir(), "kubeconfig")
	_ = os.WriteFile(bad, []byte("apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: x, context: {cluster: x}}]\n"), 0o600)
	if code, _, stderr := runCLI(t, "diff", "--kubeconfig", bad, "kube://"+crd.Name, newFile); code != 2 || !strings.Contains(stderr, "unreachable") {
		t.Fatalf("unreachable: exit %d, %s", code, stderr)
	}
}

func waitEstablished(t *testing.T, s *oracle.Server, name string) {
	t.Helper()
	for i := 0; i < 3000; i++ {
		c, err := s.CRDs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
					return
				}
			}
		}
		oracle.Pause()
	}
	t.Fatalf("CRD %s not established", name)
}

// TestClusterMetadataIsNotInvalid: the installed CRD carries what the server sets (uid,
// creationTimestamp, resourceVersion, generation, managedFields, status) and a file does not;
// the API server keeps those on update, so comparing the two reports only the schema change —
// no invalid-crd about immutable metadata — in diff kube:// and in check --cluster.
func TestClusterMetadataIsNotInvalid(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	s := oracle.Start(t)
	kubeconfig := s.Kubeconfig(t)
	crd := widgetCRD(map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}})
	if _, err := s.CRDs.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, s, crd.Name)
	head := widgetCRD(map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}, "name": {Type: "string"}})
	newFile := writeCRD(t, t.TempDir(), head)
	want := []string{"field-added info v1 .spec.name"}

	code, out, stderr := runCLI(t, "diff", "--format", "json", "--kubeconfig", kubeconfig, "kube://"+crd.Name, newFile)
	if got, _ := storedReport(t, out); code != 0 || stderr != "" || !slices.Equal(got, want) {
		t.Errorf("diff kube://: exit %d, findings %q, want %q\n%s", code, got, want, stderr)
	}

	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", crdYAML(t, crd))
	repo.Branch("main", repo.Commit("base"))
	repo.Write("config/crd/widgets.yaml", crdYAML(t, head))
	repo.Commit("add .spec.name")
	code, out, stderr = runCLI(t, "check", "--format", "json", "--repo", repo.Dir, "--base", "main", "--cluster", "--kubeconfig", kubeconfig)
	if got, _ := storedReport(t, out); code != 0 || stderr != "" || !slices.Equal(got, want) {
		t.Errorf("check --cluster: exit %d, findings %q, want %q\n%s", code, got, want, stderr)
	}
}

// widgetCRD is a namespaced Widget CRD served and stored as v1, whose spec has these properties.
func widgetCRD(spec map[string]apiextv1.JSONSchemaProps) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: spec}}}}}},
		},
	}
}

func crdYAML(t *testing.T, c *apiextv1.CustomResourceDefinition) []byte {
	t.Helper()
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeCRD(t *testing.T, dir string, c *apiextv1.CustomResourceDefinition) string {
	t.Helper()
	path := filepath.Join(dir, c.Spec.Names.Plural+".yaml")
	if err := os.WriteFile(path, crdYAML(t, c), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
