package action

import (
	"context"
	"fmt"
	"strconv"

	"github.com/sethvargo/go-githubactions"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/source"
)

// clusterInputs are the inputs that bring a live cluster in (check --cluster): the content of a
// kubeconfig, from a secret, and the bound on stored objects read per CRD.
type clusterInputs struct {
	kubeconfig []byte
	maxObjects int
}

func readClusterInputs(gha *githubactions.Action) (clusterInputs, error) {
	in := clusterInputs{maxObjects: check.DefaultMaxObjects}
	if k := gha.GetInput("kubeconfig"); k != "" {
		in.kubeconfig = []byte(k)
	}
	if v := gha.GetInput("max-objects"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return in, fmt.Errorf("input max-objects: %q is not a positive number", v)
		}
		in.maxObjects = n
	}
	return in, nil
}

// apply makes the comparison read the installed CRDs and their stored objects when a kubeconfig
// was given, within source.ClusterTimeout until stop is called. The kubeconfig stays in memory:
// it is never written where later steps could read it.
func (in clusterInputs) apply(ctx context.Context, o *check.GitOptions) (stop func(), err error) {
	if in.kubeconfig == nil {
		return func() {}, nil
	}
	conn, err := source.Connect(source.Cluster{KubeconfigData: in.kubeconfig})
	if err != nil {
		return nil, fmt.Errorf("input kubeconfig: %w", err)
	}
	ctx, stop = source.WithClusterTimeout(ctx)
	o.Cluster = func(names []string) (*source.Tree, error) { return conn.ReadCRDs(ctx, names) }
	minor := o.KubernetesVersion
	o.Stored = func(live, head *source.Tree) (check.Result, error) {
		return check.Stored(ctx, live, head, check.StoredOptions{Lister: conn, MaxObjects: in.maxObjects, KubernetesVersion: minor})
	}
	return stop, nil
}
