package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/oracle"
	"github.com/crdguard/crdguard/internal/schematest"
)

// storedReport is what the stored-object tests read from a JSON report: each finding as
// "rule severity version path object" (object as namespace/name), and the notices.
func storedReport(t *testing.T, out string) ([]string, []string) {
	t.Helper()
	var doc struct {
		Findings []struct {
			Rule, Severity, Version, Path, Message string
			Object                                 json.RawMessage
		}
		Notices []string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := []string{}
	for _, f := range doc.Findings {
		line := strings.Join([]string{f.Rule, f.Severity, f.Version, f.Path}, " ")
		if strings.HasPrefix(f.Rule, "stored-object-") {
			var o struct{ APIVersion, Kind, Namespace, Name string }
			if err := json.Unmarshal(f.Object, &o); err != nil {
				t.Fatalf("%s: object %s: %v", f.Rule, f.Object, err)
			}
			line += " " + o.APIVersion + " " + o.Kind + " " + o.Namespace + "/" + o.Name
		}
		lines = append(lines, line)
	}
	return lines, doc.Notices
}

// storedCRD is a namespaced CRD of kind Kind (plural kinds, group example.com) with these
// versions, each {name, served, storage, spec properties}.
func storedCRD(kind string, versions ...apiextv1.CustomResourceDefinitionVersion) *apiextv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names:    apiextv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Versions: versions,
		},
	}
}

func crdVersion(name string, served, storage bool, spec map[string]apiextv1.JSONSchemaProps) apiextv1.CustomResourceDefinitionVersion {
	return apiextv1.CustomResourceDefinitionVersion{Name: name, Served: served, Storage: storage,
		Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: spec}}}}}
}

// install creates a CRD and waits until it serves.
func install(t *testing.T, s *oracle.Server, c *apiextv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := s.CRDs.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), c.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, s, c.Name)
}

// store creates an object of c in version v, namespace default.
func store(t *testing.T, s *oracle.Server, c *apiextv1.CustomResourceDefinition, v, name string, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/" + v, "kind": c.Spec.Names.Kind,
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: v, Resource: c.Spec.Names.Plural}
	if _, err := s.Dynamic.Resource(gvr).Namespace("default").Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("storing %s: %v", name, err)
	}
}

// TestStoredObjects: with kube://NAME as the old side, the objects the cluster stores are
// validated against the new schema by the API server's code: a valid object is left out, an
// object the new schema refuses on update is an error at its field, one refused only on create
// (ratcheting) a warning — an error on a cluster older than 1.30 —, a field the new schema drops
// is stored-object-pruned. Object contents never appear in the report.
func TestStoredObjects(t *testing.T) {
	s, kubeconfig := startCluster(t)
	dir := t.TempDir()
	reportSchema := schematest.Compile(t, "../../docs/report.schema.json")

	old := storedCRD("Widget", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{
		"size": {Type: "integer"}, "mode": {Type: "string"}, "legacy": {Type: "string"}}))
	install(t, s, old)
	store(t, s, old, "v1", "valid", map[string]any{"size": int64(1), "mode": "fast"})
	store(t, s, old, "v1", "big", map[string]any{"size": int64(8)})
	store(t, s, old, "v1", "legacy-mode", map[string]any{"mode": "secret-legacy-value"})
	store(t, s, old, "v1", "holds-legacy", map[string]any{"legacy": "secret-data"})

	// Tightened: a maximum (ratcheting applies) and a transition rule (ratcheting never applies
	// to rules that use oldSelf); .spec.legacy removed.
	head := storedCRD("Widget", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{
		"size": {Type: "integer", Maximum: ptr.To(5.0)},
		"mode": {Type: "string", XValidations: apiextv1.ValidationRules{{Rule: "oldSelf.size() < 12 || self != oldSelf",
			MessageExpression: "'mode ' + self + ' is retired'", Message: "this mode is retired"}}}}))
	newFile := writeCRD(t, dir, head)

	diff := func(args ...string) (int, []string, []string, string) {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"diff", "--format", "json", "--kubeconfig", kubeconfig}, args...)...)
		if stderr != "" {
			t.Fatalf("stderr: %s", stderr)
		}
		if strings.Contains(out, "secret") {
			t.Errorf("the report shows object contents:\n%s", out)
		}
		if err := schematest.Validate(reportSchema, []byte(out)); err != nil {
			t.Errorf("output does not match docs/report.schema.json: %v", err)
		}
		fs, notices := storedReport(t, out)
		return code, fs, notices, out
	}
	code, fs, notices, out := diff("kube://"+old.Name, newFile)
	want := []string{
		"field-removed error v1 .spec.legacy",
		"stored-object-pruned error v1 .spec.legacy example.com/v1 Widget default/holds-legacy",
		"max-added error v1 .spec.size",
		"stored-object-invalid warning v1 .spec.size example.com/v1 Widget default/big",
		"validation-rule-added error v1 .spec.mode",
		"stored-object-invalid error v1 .spec.mode example.com/v1 Widget default/legacy-mode",
	}
	wantNotices := []string{"stored objects of widgets.example.com (read as example.com/v1): 1 of 4 refused on update, 1 more only on create, 1 of 4 lose fields to pruning"}
	if code != 1 || !sameSet(fs, want) || !slices.Equal(notices, wantNotices) {
		t.Errorf("exit %d\nfindings %q\nwant     %q\nnotices %q\nwant    %q", code, fs, want, notices, wantNotices)
	}
	var doc struct {
		Findings []struct{ Rule, Path, Message string }
	}
	_ = json.Unmarshal([]byte(out), &doc)
	for _, f := range doc.Findings {
		if f.Rule == "stored-object-invalid" && f.Path == ".spec.mode" {
			if want := "Widget default/legacy-mode: spec.mode: Invalid value: this mode is retired; refused when written back unchanged: fix this object before the upgrade, or keep the schema accepting it"; f.Message != want {
				t.Errorf("message %q\nwant    %q", f.Message, want)
			}
		}
	}

	// A cluster older than 1.30 has no ratcheting: the big Widget cannot be updated either.
	cfg := filepath.Join(dir, "old-cluster.yaml")
	if err := os.WriteFile(cfg, []byte("kubernetesVersion: \"1.29\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fs, _, _ = diff("--config", cfg, "kube://"+old.Name, newFile)
	if !slices.Contains(fs, "stored-object-invalid error v1 .spec.size example.com/v1 Widget default/big") {
		t.Errorf("kubernetesVersion 1.29: %q", fs)
	}

	// The same through check --cluster: the findings say they come from the cluster.
	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", crdYAML(t, old))
	repo.Branch("main", repo.Commit("base"))
	repo.Write("config/crd/widgets.yaml", crdYAML(t, head))
	repo.Commit("tighten")
	_, out, stderr := runCLI(t, "check", "--format", "json", "--repo", repo.Dir, "--base", "main", "--cluster", "--kubeconfig", kubeconfig)
	fs, notices = storedReport(t, out)
	if !sameSet(fs, want) || !slices.Equal(notices, wantNotices) || stderr != "" {
		t.Errorf("check --cluster:\nfindings %q\nnotices %q\n%s", fs, notices, stderr)
	}

	// A CRD without objects is a notice.
	empty := storedCRD("Gizmo", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}))
	install(t, s, empty)
	emptyHead := storedCRD("Gizmo", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer", Maximum: ptr.To(5.0)}}))
	_, _, notices, _ = diff("kube://"+empty.Name, writeCRD(t, dir, emptyHead))
	if want := []string{"stored objects of gizmos.example.com: the cluster has none"}; !slices.Equal(notices, want) {
		t.Errorf("no objects: notices %q, want %q", notices, want)
	}
}

// TestStoredObjectsOfARemovedVersion: an object stored in a version the change stops serving is
// read as the version head serves (None conversion relabels it) and judged there.
func TestStoredObjectsOfARemovedVersion(t *testing.T) {
	s, kubeconfig := startCluster(t)
	spec := map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}, "color": {Type: "string"}}
	old := storedCRD("Gadget", crdVersion("v1alpha1", true, true, spec))
	install(t, s, old)
	store(t, s, old, "v1alpha1", "old-one", map[string]any{"size": int64(3), "color": "red"})
	// Head serves and stores v1 only, without .spec.color.
	head := storedCRD("Gadget", crdVersion("v1alpha1", false, false, spec), crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}))
	code, out, stderr := runCLI(t, "diff", "--format", "json", "--kubeconfig", kubeconfig, "kube://"+old.Name, writeCRD(t, t.TempDir(), head))
	fs, notices := storedReport(t, out)
	want := []string{
		"served-version-removed error v1alpha1 ",
		"storage-version-changed warning v1 ",
		"stored-object-pruned error v1 .spec.color example.com/v1 Gadget default/old-one",
		"version-added info v1 ",
	}
	wantNotices := []string{"stored objects of gadgets.example.com (read as example.com/v1alpha1, judged as v1): 0 of 1 refused on update, 0 more only on create, 1 of 1 lose fields to pruning"}
	if code != 1 || stderr != "" || !sameSet(fs, want) || !slices.Equal(notices, wantNotices) {
		t.Errorf("exit %d %s\nfindings %q\nwant     %q\nnotices %q\nwant    %q", code, stderr, fs, want, notices, wantNotices)
	}
}

// TestStoredObjectsLimit: objects are read in pages of 500 with the server's chunking, and the
// reading stops at --max-objects with a notice that says how many were left.
func TestStoredObjectsLimit(t *testing.T) {
	s, kubeconfig := startCluster(t)
	old := storedCRD("Thing", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}))
	install(t, s, old)
	for i := range 505 {
		store(t, s, old, "v1", fmt.Sprintf("t%03d", i), map[string]any{"size": int64(i)})
	}
	head := storedCRD("Thing", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer", Maximum: ptr.To(500.0)}}))
	newFile := writeCRD(t, t.TempDir(), head)
	for _, tc := range []struct {
		max    string
		want   []string
		notice string
	}{
		// Two pages (500 + 2): t501 is the first over the bound, reached on the second page.
		{"502", []string{"max-added error v1 .spec.size", "stored-object-invalid warning v1 .spec.size example.com/v1 Thing default/t501"},
			"stored objects of things.example.com (read as example.com/v1): 0 of 502 refused on update, 1 more only on create, 0 of 502 lose fields to pruning; stopped at --max-objects 502, about 3 more not checked"},
		{"10", []string{"max-added error v1 .spec.size"},
			"stored objects of things.example.com (read as example.com/v1): 0 of 10 refused on update, 0 more only on create, 0 of 10 lose fields to pruning; stopped at --max-objects 10, about 495 more not checked"},
		{"10000", []string{"max-added error v1 .spec.size",
			"stored-object-invalid warning v1 .spec.size example.com/v1 Thing default/t501", "stored-object-invalid warning v1 .spec.size example.com/v1 Thing default/t502",
			"stored-object-invalid warning v1 .spec.size example.com/v1 Thing default/t503", "stored-object-invalid warning v1 .spec.size example.com/v1 Thing default/t504"},
			"stored objects of things.example.com (read as example.com/v1): 0 of 505 refused on update, 4 more only on create, 0 of 505 lose fields to pruning"},
	} {
		_, out, stderr := runCLI(t, "diff", "--format", "json", "--max-objects", tc.max, "--kubeconfig", kubeconfig, "kube://"+old.Name, newFile)
		fs, notices := storedReport(t, out)
		if stderr != "" || !sameSet(fs, tc.want) || !slices.Equal(notices, []string{tc.notice}) {
			t.Errorf("--max-objects %s: %s\nfindings %q\nwant     %q\nnotices %q\nwant    %q", tc.max, stderr, fs, tc.want, notices, tc.notice)
		}
	}
}

// startCluster starts the in-process API server and writes a kubeconfig that reaches it.
func startCluster(t *testing.T) (*oracle.Server, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	s := oracle.Start(t)
	return s, s.Kubeconfig(t)
}

// sameSet compares two lists of findings regardless of order (reports sort by line).
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestStoredObjectsNeedList: a user who may read CRDs but not list their objects gets a clear
// error naming the verb and the resource, from the API server's own authorization (a webhook
// that plays RBAC: everything but list on things).
func TestStoredObjectsNeedList(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	authz := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ra := review.Spec.ResourceAttributes
		review.Status.Allowed = ra == nil || ra.Verb != "list" || ra.Resource != "things"
		review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	defer authz.Close()
	authzConfig := filepath.Join(t.TempDir(), "authz")
	if err := os.WriteFile(authzConfig, []byte("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: '"+authz.URL+"'}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := oracle.StartWithFlags(t, "--authorization-kubeconfig", authzConfig)
	old := storedCRD("Thing", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}))
	install(t, s, old)
	head := storedCRD("Thing", crdVersion("v1", true, true, map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer", Maximum: ptr.To(5.0)}}))

	// The same cluster, as a user without credentials of its own (system:anonymous), whom the
	// webhook decides for.
	var cfg map[string]any
	data, err := os.ReadFile(s.Kubeconfig(t))
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg["users"] = []any{map[string]any{"name": "oracle", "user": map[string]any{}}}
	anonymous := filepath.Join(t.TempDir(), "kubeconfig")
	if data, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(anonymous, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "diff", "--kubeconfig", anonymous, "kube://"+old.Name, writeCRD(t, t.TempDir(), head))
	want := "crdguard diff: not allowed to list things.example.com at " + s.Config.Host + " (needs the list verb on things.example.com in all namespaces): 403 Forbidden: things.example.com is forbidden: User \"system:anonymous\" cannot list resource \"things\" in API group \"example.com\" at the cluster scope\n"
	if code != 2 || out != "" || stderr != want {
		t.Errorf("exit %d\nstdout %s\nstderr %q\nwant   %q", code, out, stderr, want)
	}
}

// TestMaxObjectsMustBePositive: a bound that would read nothing is a mistake, not a pass.
func TestMaxObjectsMustBePositive(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--max-objects", "0", "kube://widgets.example.com", example + "new.yaml"}, "crdguard diff: --max-objects: 0 is not a positive number\n"},
		{[]string{"check", "--base", "main", "--cluster", "--max-objects", "-1", "--repo", gittest.New(t).Dir}, "crdguard check: --max-objects: -1 is not a positive number\n"},
	} {
		code, out, stderr := runCLI(t, tc.args...)
		if code != 2 || out != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, stderr, tc.want)
		}
	}
}
