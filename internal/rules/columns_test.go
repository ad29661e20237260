package rules

import (
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The printer-columns-changed message names the columns added, changed and removed.
func TestColumnChanges(t *testing.T) {
	col := func(name, path string) apiextv1.CustomResourceColumnDefinition {
		return apiextv1.CustomResourceColumnDefinition{Name: name, Type: "string", JSONPath: path}
	}
	ready, age, status := col("Ready", ".status.ready"), col("Age", ".metadata.creationTimestamp"), col("Status", ".status.phase")
	for _, c := range []struct {
		old, new []apiextv1.CustomResourceColumnDefinition
		want     string
	}{
		{nil, []apiextv1.CustomResourceColumnDefinition{ready, age}, " (added Ready, Age)"},
		{[]apiextv1.CustomResourceColumnDefinition{ready, status}, []apiextv1.CustomResourceColumnDefinition{col("Ready", ".status.conditions[0].status"), age},
			" (added Age; changed Ready; removed Status)"},
		{[]apiextv1.CustomResourceColumnDefinition{ready, age}, []apiextv1.CustomResourceColumnDefinition{age, ready}, " (their order)"},
	} {
		if got := columnChanges(c.old, c.new); got != c.want {
			t.Errorf("columnChanges = %q, want %q", got, c.want)
		}
	}
}
