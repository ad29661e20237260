package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestMeasureStoredHTTPRoutes measures what the README states: diff kube:// of Gateway API's
// HTTPRoute (v1.5.0 installed, v1.6.0 in the file, the largest CRD of the corpus, 3,500 lines
// per version and dozens of CEL rules) with CRDGUARD_MEASURE objects stored in the in-process
// API server. Off by default: storing the objects takes minutes.
//
//	CRDGUARD_MEASURE=10000 go test ./internal/cli -run TestMeasureStoredHTTPRoutes -v
func TestMeasureStoredHTTPRoutes(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CRDGUARD_MEASURE"))
	if n == 0 {
		t.Skip("set CRDGUARD_MEASURE=N to measure N stored HTTPRoutes")
	}
	const dir = "../../../shared/corpus/kubernetes-sigs__gateway-api/httproutes.gateway.networking.k8s.io/v1.5.0__v1.6.0/"
	data, err := os.ReadFile(dir + "old.yaml")
	if err != nil {
		t.Skip("corpus not available")
	}
	old := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, old); err != nil {
		t.Fatal(err)
	}
	s, kubeconfig := startCluster(t)
	install(t, s, old)
	gvr := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := storeRoute(s.Dynamic.Resource(gvr).Namespace(fmt.Sprintf("team-%d", i%20)), i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("stored %d HTTPRoutes in %v", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	code, out, stderr := runCLI(t, "diff", "--kubeconfig", kubeconfig, "kube://"+old.Name, dir+"new.yaml")
	t.Logf("diff kube:// with %d stored HTTPRoutes: %v, exit %d\n%s%s", n, time.Since(start).Round(time.Millisecond), code, stderr, tail(out, 600))
}

// storeRoute stores a typical HTTPRoute: two rules with matches, a filter and backends; every
// 1,000th has two CORS filters, which v1.6.0 forbids.
func storeRoute(c interface {
	Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
}, i int) error {
	filters := []any{map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{"set": []any{map[string]any{"name": "x-route", "value": "r"}}}}}
	if i%1000 == 999 {
		cors := map[string]any{"type": "CORS", "cors": map[string]any{"allowOrigins": []any{"https://example.com"}}}
		filters = []any{cors, cors}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": fmt.Sprintf("route-%05d", i), "namespace": fmt.Sprintf("team-%d", i%20)},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "gateway"}},
			"hostnames":  []any{fmt.Sprintf("app%d.example.com", i)},
			"rules": []any{
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/api"}}, map[string]any{"headers": []any{map[string]any{"name": "x-canary", "value": "yes"}}}},
					"filters":     filters,
					"backendRefs": []any{map[string]any{"name": "api", "port": int64(8080), "weight": int64(90)}, map[string]any{"name": "api-canary", "port": int64(8080), "weight": int64(10)}},
				},
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "Exact", "value": "/healthz"}}},
					"backendRefs": []any{map[string]any{"name": "health", "port": int64(80)}},
				},
			},
		},
	}}
	_, err := c.Create(context.Background(), obj, metav1.CreateOptions{})
	return err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
