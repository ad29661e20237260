package celproof

import "k8s.io/apimachinery/pkg/util/validation/field"

// Duplicates is the witness of a list that becomes a set or a map: an object whose list at
// steps holds two copies of the smallest item the old schema accepts, with the map keys set
// (so that the new schema refuses the copy for sharing them, not for lacking one), when the
// old schema accepts the object and the new one refuses the second item as a duplicate, as the
// API server's validator decides both. nil when there is none.
func (j *Judge) Duplicates(steps []Step, keys []string) map[string]any {
	if j.err != nil {
		return nil
	}
	list := walk(j.oldRoot, steps)
	if list == nil || list.Items == nil {
		return nil
	}
	item := minimal(list.Items)
	if m, ok := item.(map[string]any); ok {
		for _, k := range keys {
			if p, ok := list.Items.Properties[k]; ok && m[k] == nil {
				m[k] = minimal(&p)
			}
		}
	}
	obj, _ := j.Refused(steps, []any{[]any{item, deepCopy(item)}}, func(e *field.Error) bool {
		return e.Type == field.ErrorTypeDuplicate
	})
	return obj
}
