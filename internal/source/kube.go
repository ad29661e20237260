package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
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
	// KubeconfigData is a kubeconfig's content (the action's kubeconfig input, from a secret),
	// used instead of any file.
	KubeconfigData []byte
}

// Conn is a connection to a cluster's API server, from a kubeconfig.
type Conn struct {
	host string
	hc   *http.Client
}

// requestTimeout bounds each request: a page of objects or one CRD; a server that takes longer
// is reported rather than waited for.
const requestTimeout = 30 * time.Second

// ClusterTimeout bounds everything one run asks a cluster (each request has requestTimeout as
// well): a slow cluster is reported, not waited for indefinitely.
const ClusterTimeout = 10 * time.Minute

// errClusterTimeout says why a run stopped talking to the cluster.
var errClusterTimeout = fmt.Errorf("the run's %v for the cluster ran out", ClusterTimeout)

// WithClusterTimeout is ctx bounded by ClusterTimeout.
func WithClusterTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, ClusterTimeout, errClusterTimeout)
}

// Connect loads the kubeconfig and prepares requests to its cluster (nothing is sent yet).
func Connect(c Cluster) (*Conn, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	var loader clientcmd.ClientConfig = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context})
	if c.KubeconfigData != nil {
		raw, err := clientcmd.Load(c.KubeconfigData)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		loader = clientcmd.NewNonInteractiveClientConfig(*raw, c.Context, &clientcmd.ConfigOverrides{}, nil)
	}
	cfg, err := loader.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// client-go's own words suggest KUBERNETES_MASTER, which nothing reads any more.
		where := "KUBECONFIG, else ~/.kube/config"
		if c.Kubeconfig != "" {
			where = c.Kubeconfig
		}
		return nil, fmt.Errorf("reading kubeconfig: no cluster configured in %s: give one with --kubeconfig FILE (and --context NAME)", where)
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	cfg.Timeout = requestTimeout
	// Plain GETs: the typed clientset would link every Kubernetes API group into crdguard.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return &Conn{host: strings.TrimSuffix(cfg.Host, "/") + strings.TrimSuffix(cfg.APIPath, "/"), hc: hc}, nil
}

// get sends a GET for path (below the server's root) and returns the status and the body.
func (k *Conn) get(ctx context.Context, path string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.host+path, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("gave up on the cluster at %s: %w", k.host, context.Cause(ctx))
		}
		return nil, nil, fmt.Errorf("cluster at %s unreachable: %w", k.host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFileSize))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s from %s: %w", path, k.host, err)
	}
	return resp, body, nil
}

// ReadCluster reads one installed CRD (see Conn.ReadCRD).
func ReadCluster(ctx context.Context, c Cluster, name string) (*Tree, error) {
	k, err := Connect(c)
	if err != nil {
		return nil, err
	}
	return k.ReadCRD(ctx, name)
}

// ReadCRD reads one installed CRD, with its status.storedVersions: the versions that really
// have data in etcd. The CRD is rendered as YAML under the name kube://NAME, so findings on the
// old side point at lines of that rendering.
func (k *Conn) ReadCRD(ctx context.Context, name string) (*Tree, error) {
	resp, body, err := k.get(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("CRD %s is %w at %s", name, ErrNotInstalled, k.host)
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, fmt.Errorf("not allowed to read CRD %s from %s (needs get on customresourcedefinitions.apiextensions.k8s.io): %s", name, k.host, resp.Status)
	default:
		return nil, fmt.Errorf("reading CRD %s from %s: %s", name, k.host, resp.Status)
	}
	obj := &apiextv1.CustomResourceDefinition{}
	if err := json.Unmarshal(body, obj); err != nil {
		return nil, fmt.Errorf("decoding CRD %s from %s: %w", name, k.host, err)
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

// ReadCRDs reads the installed CRDs of these names; one the cluster does not have is simply
// new there.
func (k *Conn) ReadCRDs(ctx context.Context, names []string) (*Tree, error) {
	live := &Tree{}
	for _, n := range names {
		t, err := k.ReadCRD(ctx, n)
		if err != nil {
			if errors.Is(err, ErrNotInstalled) {
				continue
			}
			return nil, err
		}
		live.CRDs = append(live.CRDs, t.CRDs...)
		live.Problems = append(live.Problems, t.Problems...)
	}
	return live, nil
}

// IsKube reports whether an argument names a CRD in a cluster, and which.
func IsKube(arg string) (string, bool) {
	if !strings.HasPrefix(arg, KubePrefix) {
		return "", false
	}
	return strings.TrimPrefix(arg, KubePrefix), true
}
