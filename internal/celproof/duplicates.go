package celproof

import "k8s.io/apimachinery/pkg/util/validation/field"

// Duplicates is the witness of a list that becomes a set or a map: an object whose list at
// steps holds two copies of the smallest item the old schema accepts (map keys it leaves out
// are filled in alike by the new schema's defaults), when the old schema accepts the object
// and the new one refuses the second item as a duplicate, as the API server's validator
// decides both. nil when there is none.
func (j *Judge) Duplicates(steps []Step) map[string]any {
	if j.err != nil {
		return nil
	}
	list := walk(j.oldRoot, steps)
	if list == nil || list.Items == nil {
		return nil
	}
	item := minimal(list.Items)
	obj, _ := j.Refused(steps, []any{[]any{item, deepCopy(item)}}, func(e *field.Error) bool {
		return e.Type == field.ErrorTypeDuplicate
	})
	return obj
}
