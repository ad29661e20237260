package rules
import ("testing";"os";"path/filepath";"github.com/crdguard/crdguard/internal/crd")
func BenchmarkZZ(b *testing.B){
	files,_ := filepath.Glob("../../../shared/corpus/*/*/*/old.yaml")
	type p struct{o,n []byte}
	var ps []p
	for _, f := range files { o,_ := os.ReadFile(f); n,_ := os.ReadFile(filepath.Join(filepath.Dir(f),"new.yaml")); ps = append(ps, p{o,n}) }
	for b.Loop() {
		for _, x := range ps {
			o,_ := crd.Parse("o", x.o); n,_ := crd.Parse("n", x.n)
			Compare(crd.Pair{Old:o[0], New:n[0]}, Options{})
		}
	}
}
