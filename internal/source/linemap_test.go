package source

import (
	"fmt"
	"testing"
)

// TestLineMap: each rendered line lands on the template line that writes it.
func TestLineMap(t *testing.T) {
	for _, tc := range []struct {
		name, src, out string
		want           []int // template line of each rendered line
	}{
		{"a condition around the document", "{{- if .Values.on }}\nkind: A\nspec:\n  x: 1\n{{- end }}\n", "\nkind: A\nspec:\n  x: 1\n", []int{1, 2, 3, 4}},
		{"a value filled in on its line", "a: 1\nmax: {{ .Values.max }}\nb: 2\n", "a: 1\nmax: 5\nb: 2\n", []int{1, 2, 3}},
		{"an include writes lines of its own", "metadata:\n  labels:\n    {{- include \"l\" . | nindent 4 }}\nspec: {}\n", "metadata:\n  labels:\n    a: b\n    c: d\nspec: {}\n", []int{1, 2, 3, 3, 4}},
		{"a key among other lines of a shorter run", "x: 1\n{{- if .a }}\nk: {{ .v }}\n{{- end }}\nm: {{ .w }}\ny: 2\n", "x: 1\nk: 3\nm: 4\ny: 2\n", []int{1, 3, 5, 6}},
		{"indentation moved by nindent", "spec:\n  {{- toYaml .Values.spec | nindent 2 }}\nz: 1\n", "spec:\n  a: 1\nz: 1\n", []int{1, 2, 3}},
		{"no template text", "", "a: 1\n", []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := lineMap([]byte(tc.src), []byte(tc.out))
			var got []int
			for i := range tc.want {
				got = append(got, m(i+1))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("lines %v, want %v", got, tc.want)
			}
		})
	}
}
