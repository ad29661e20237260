// Package check runs the whole comparison of two trees: it pairs their CRDs, turns what the
// sources could not read into findings, and runs the rules on every pair.
package check

import (
	"runtime"
	"sync"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// Result is what one comparison found, before the policy is applied.
type Result struct {
	// Findings are sorted by file, line and rule.
	Findings []finding.Finding
	// CRDs is the number of CRD names compared.
	CRDs int
	// Notices say what was skipped on either side.
	Notices []string
}

// Trees compares the CRDs of an old and a new tree.
func Trees(old, new *source.Tree, opts rules.Options) Result {
	var r Result
	oldByName, oldDups := old.Index()
	newByName, newDups := new.Index()
	r.Notices = append(append(r.Notices, old.Notices...), new.Notices...)
	for _, p := range old.Problems {
		r.Notices = append(r.Notices, "base: "+p.Error())
	}
	for _, d := range oldDups {
		r.Notices = append(r.Notices, "base: CRD "+d.Again.Name+" is defined in "+d.First.File+" and again in "+d.Again.File)
	}
	broken := map[string]bool{}
	for _, p := range new.Problems {
		r.Findings = append(r.Findings, rules.Invalid(p, finding.Head))
		if p.Name != "" {
			broken[p.Name] = true
		}
	}
	for _, d := range newDups {
		r.Findings = append(r.Findings, rules.Duplicate(d.First, d.Again, finding.Head))
	}
	pairs := source.Pairs(oldByName, newByName)
	r.CRDs = len(pairs)
	perPair := make([][]finding.Finding, len(pairs))
	parallel(len(pairs), func(i int) {
		p := pairs[i]
		if p.New == nil && broken[p.Old.Name] {
			return // invalid-crd already says it; it is not a removal
		}
		perPair[i] = serverChecks(p, rules.Compare(p, opts))
	})
	for _, fs := range perPair {
		r.Findings = append(r.Findings, fs...)
	}
	r.Findings = append(r.Findings, samples(pairs, new.Objects)...)
	finding.Sort(r.Findings)
	return r
}

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines: CRDs are independent, and the API
// server's validation (CEL compilation) is the costly part of a comparison.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
