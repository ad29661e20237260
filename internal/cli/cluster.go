package cli

import (
	"context"
	"fmt"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/source"
)

// clusterOptions are the flags that reach a cluster.
type clusterOptions struct {
	source.Cluster
	maxObjects int
}

// clusterFlags registers --kubeconfig, --context and --max-objects, saying what they are for.
func (c *command) clusterFlags(forWhat string) *clusterOptions {
	var cl clusterOptions
	c.fs.StringVar(&cl.Kubeconfig, "kubeconfig", "", "kubeconfig for "+forWhat+" (default: KUBECONFIG or ~/.kube/config)")
	c.fs.StringVar(&cl.Context, "context", "", "kubeconfig context for "+forWhat)
	c.fs.IntVar(&cl.maxObjects, "max-objects", check.DefaultMaxObjects, "stored objects read per changed CRD from the cluster ("+forWhat+")")
	return &cl
}

// validate refuses a --max-objects that would read nothing.
func (cl *clusterOptions) validate() error {
	if cl.maxObjects < 1 {
		return fmt.Errorf("--max-objects: %d is not a positive number", cl.maxObjects)
	}
	return nil
}

// stored is how the stored objects are read and judged.
func (cl *clusterOptions) stored(live *source.Conn, cfg *policy.Config) check.StoredOptions {
	return check.StoredOptions{Lister: live, MaxObjects: cl.maxObjects, KubernetesVersion: cfg.KubernetesMinor()}
}

// readOld reads the old side of diff: a file, a directory, or kube://NAME from a cluster, in
// which case the connection is returned too, to read its stored objects.
func readOld(ctx context.Context, arg string, cluster source.Cluster, helm source.HelmSettings) (*source.Tree, *source.Conn, error) {
	name, ok := source.IsKube(arg)
	if !ok {
		t, err := source.ReadPathWith(arg, false, helm)
		return t, nil, err
	}
	conn, err := source.Connect(cluster)
	if err != nil {
		return nil, nil, err
	}
	t, err := conn.ReadCRD(ctx, name)
	return t, conn, err
}

// merged adds the stored-object findings and notices to a comparison's result.
func merged(res, stored check.Result) check.Result {
	res.Findings = append(res.Findings, stored.Findings...)
	finding.Sort(res.Findings)
	res.Notices = append(res.Notices, stored.Notices...)
	return res
}
