package celproof

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/validation"
)

// Refused tries each value in turn at the node steps lead to, embedded in a small object of the
// old schema, and returns the first object that the old version accepts to create (OpenAPI and
// CEL, as the server checks a create) and that the new version refuses with an error at the node
// for which refused holds: how a keyword that is no CEL rule (a pattern) shows its witness. used
// is the value in it. Nil when no value makes such an object.
func (j *Judge) Refused(steps []Step, values []any, refused func(*field.Error) bool) (obj map[string]any, used any) {
	if j.err != nil {
		return nil, nil
	}
	defer func() {
		// The validators are third-party code fed with untrusted documents: whatever goes
		// wrong in them leaves the change without an example.
		if recover() != nil {
			obj, used = nil, nil
		}
	}()
	var sides [2]*validation.Schema
	for i, ver := range j.versions {
		s, err := ver.WithoutCEL()
		if err != nil {
			return nil, nil
		}
		sides[i] = s
	}
	// OpenAPI errors name a map's value spec.m.a where CEL's (and the list validator's) name
	// it spec.m[a].
	raw := fieldPath(steps)
	at := strings.ReplaceAll(raw, "[a]", ".a")
	for _, v := range values {
		obj := j.object(steps, v)
		before := sides[0].Create(obj)
		if before.Errors != nil || j.celFails("old", j.oldRoot, before.Object, ".", true, "") {
			continue
		}
		for _, e := range sides[1].Create(obj).Errors {
			// kube-openapi's format errors carry no field, only "… in spec.size" at the end; a
			// list's duplicates are named by their index (spec.ports[1]).
			if (e.Field == at || strings.HasPrefix(e.Field, raw+"[") || e.Field == "<nil>" && strings.HasSuffix(e.Detail, " in "+at)) && refused(e) {
				return j.asNamed(obj), v
			}
		}
	}
	return nil, nil
}
