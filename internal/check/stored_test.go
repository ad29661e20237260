package check

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/source"
)

// storedFile lists the objects of a YAML file as a cluster would: every object of the resource's
// group and kind, in the version asked for (as None conversion relabels it). Tests against the
// API server itself are in internal/cli (TestStoredObjects…).
type storedFile []byte

func (f storedFile) List(_ context.Context, r source.Resource, max int, each func(map[string]any) error) (source.Listed, error) {
	var l source.Listed
	for _, o := range crd.ParseObjects("stored.yaml", f) {
		group, _, _ := strings.Cut(o.APIVersion, "/")
		if group != r.Group || strings.ToLower(o.Kind)+"s" != r.Plural {
			continue
		}
		if l.Objects == max {
			l.Truncated = true
			return l, nil
		}
		obj := runtime.DeepCopyJSON(o.Data)
		obj["apiVersion"] = r.Group + "/" + r.Version
		l.Objects++
		if err := each(obj); err != nil {
			return l, err
		}
	}
	return l, nil
}
