package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// KubePrefix marks a CRD read from a live cluster: kube://widgets.example.com.
const KubePrefix = "kube://"

// ErrNotInstalled says the cluster has no CRD of that name.
var ErrNotInstalled = errors.New("not installed in the cluster")

// Cluster says how to reach a cluster: the usual kubeconfig rules (KUBECONFIG, ~/.kube/config)
// unless Kubeconfig or Context say otherwise.
type Cluster struct {
	Kubeconfig, Context string
}

// ReadCluster reads one installed CRD, with its status.storedVersions: the versions that
// really have data in etcd. The CRD is rendered as YAML under the name kube://NAME, so findings
// on the old side point at lines of that rendering.
func ReadCluster(ctx context.Context, c Cluster, name string) (*Tree, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	cfg.Timeout = 30 * time.Second
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	obj, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("CRD %s is %w at %s", name, ErrNotInstalled, cfg.Host)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("not allowed to read CRD %s from %s (needs get on customresourcedefinitions.apiextensions.k8s.io): %w", name, cfg.Host, err)
	case err != nil:
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil, fmt.Errorf("reading CRD %s from %s: %w", name, cfg.Host, err)
		}
		return nil, fmt.Errorf("cluster at %s unreachable: %w", cfg.Host, err)
	}
	obj.APIVersion, obj.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	obj.ManagedFields = nil
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("rendering CRD %s: %w", name, err)
	}
	t := &Tree{}
	t.AddFile(KubePrefix+name, data, true)
	return t, nil
}

// IsKube reports whether an argument names a CRD in a cluster, and which.
func IsKube(arg string) (string, bool) {
	if !strings.HasPrefix(arg, KubePrefix) {
		return "", false
	}
	return strings.TrimPrefix(arg, KubePrefix), true
}
