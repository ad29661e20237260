package action

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/crdguard/crdguard/internal/oracle"
)

// TestActionWithStagingCluster: given a kubeconfig input (a secret in a workflow), the action
// compares head with the cluster's CRD too and validates the objects stored there: the Widget
// that sets .spec.name, which the pull request removes, is named; its value is not.
func TestActionWithStagingCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	pr := newPullRequest(t)
	s := oracle.Start(t)
	data, err := os.ReadFile("../../testdata/action/pr/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CRDs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "named", "namespace": "team-a"}, "spec": map[string]any{"name": "top-secret-name", "size": int64(1)}}}
	widgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("team-a")
	for i := 0; ; i++ { // the CRD serves once the server has established it
		if _, err = widgets.Create(ctx, obj, metav1.CreateOptions{}); err == nil {
			break
		} else if i == 3000 {
			t.Fatal(err)
		}
		oracle.Pause()
	}
	kubeconfig, err := os.ReadFile(s.Kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	pr.env["INPUT_KUBECONFIG"] = string(kubeconfig)

	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	report := readFile(t, filepath.Join(pr.repo.Dir, ReportFile))
	var rep struct {
		Findings []struct {
			Rule, Path string
			Object     json.RawMessage
		}
		Notices []string
	}
	if err := json.Unmarshal([]byte(report), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		var o bytes.Buffer
		if len(f.Object) > 0 {
			if err := json.Compact(&o, f.Object); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, f.Rule+" "+f.Path+" "+o.String())
	}
	want := []string{
		"field-removed .spec.name ",
		`stored-object-pruned .spec.name {"apiVersion":"example.com/v1","kind":"Widget","namespace":"team-a","name":"named"}`,
		"max-decreased .spec.size ",
		"description-changed .spec.color ",
	}
	wantNotices := []string{"stored objects of widgets.example.com (read as example.com/v1): 0 of 1 refused on update, 0 more only on create, 1 of 1 lose fields to pruning"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || !slices.Equal(rep.Notices, wantNotices) {
		t.Errorf("findings %q\nwant     %q\nnotices %q", got, want, rep.Notices)
	}
	for _, leak := range []string{"top-secret-name", "client-key-data", "certificate-authority-data"} {
		if slices.ContainsFunc([]string{out, report, pr.completed(pr.head).Summary}, func(s string) bool { return strings.Contains(s, leak) }) {
			t.Errorf("%s appears in the log, report or check run", leak)
		}
	}
}
