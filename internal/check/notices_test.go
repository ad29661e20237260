package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Each notice once per file and cause: repeats from several trees once, the same on base and
// head once for both, one cause at several lines of a file once with its lines (the first five
// listed, the rest counted); different causes, files or sides stay apart, in order of first
// appearance.
func TestNotices(t *testing.T) {
	var many []string
	for i := 1; i <= 44; i++ {
		many = append(many, fmt.Sprintf("head: charts/x/templates/crds.yaml:%d: a template expression, skipped", i*10))
	}
	for _, tc := range []struct {
		name string
		in   [][]string
		want []string
	}{
		{"repeats", [][]string{{"big.yaml: skipped, larger than 16 MiB", "a.yaml: no CRD"}, {"big.yaml: skipped, larger than 16 MiB"}, {"big.yaml: skipped, larger than 16 MiB"}},
			[]string{"big.yaml: skipped, larger than 16 MiB", "a.yaml: no CRD"}},
		{"base and head", [][]string{{"base: x.yaml:3: bad", "head: y.yaml:3: bad", "head: x.yaml:3: bad"}},
			[]string{"base and head: x.yaml:3: bad", "head: y.yaml:3: bad"}},
		{"lines of one file", [][]string{{"base: x.yaml:3: bad", "base: x.yaml:9: bad", "base: x.yaml:9: other", "head: x.yaml:12: bad"}},
			[]string{"base: x.yaml: lines 3, 9: bad", "base: x.yaml:9: other", "head: x.yaml:12: bad"}},
		{"44 at once", [][]string{many}, []string{"head: charts/x/templates/crds.yaml: lines 10, 20, 30, 40, 50 and 39 more: a template expression, skipped"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Notices(tc.in...); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
