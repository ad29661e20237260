// Command bench runs crdguard and crdify (sigs.k8s.io/crdify, as a library: the version crdguard's go.mod pins) on every pair of
// ../shared/corpus, and on each of the hardest pairs of ../shared/perf alone, in one process and
// prints side-by-side tables. It is its own module so that crdify never enters crdguard's
// dependencies.
//
//	cd bench && go run . -corpus ../../shared/corpus -perf ../../shared/perf
package main

import (
	"bufio"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/celproof"
	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
	"github.com/crdguard/crdguard/internal/validation"
)

type pair struct {
	name     string
	old, new []byte
}

// tool compares one pair from bytes, decoding included; runAll, when set, compares a release
// of many pairs at once, as crdguard check does.
type tool struct {
	name   string
	run    func(p pair) error
	runAll func(ps []pair) error
}

type measure struct {
	best      time.Duration
	allocs    uint64
	bytes     uint64
	peakHeap  uint64
	pairCount int
	mb        float64
}

func main() {
	corpus := flag.String("corpus", "../../shared/corpus", "the corpus folder (with pairs.tsv)")
	perf := flag.String("perf", "../../shared/perf", "the hardest pairs for speed, each alone (<name>/{old,new}.yaml); empty: none")
	more := flag.String("more", "../../shared/corpus-more", "a second corpus: with the first, one release upgrades the latest pair of every CRD of both at once; empty: none")
	runs := flag.Int("runs", 5, "alternating runs per tool; the best is reported")
	flag.Parse()
	pairs, err := load(*corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	var release []pair
	if *more != "" {
		morePairs, err := load(*more)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		release = latestOfEach(append(slices.Clone(pairs), morePairs...))
	}
	var hard []pair
	if *perf != "" {
		if hard, err = loadDirs(*perf); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	largest := pairs[0]
	for _, p := range pairs {
		if len(p.old)+len(p.new) > len(largest.old)+len(largest.new) {
			largest = p
		}
	}

	crdifyRunner, err := runner.New(&config.Config{UnhandledEnforcement: config.EnforcementPolicyError, Conversion: config.ConversionPolicyNone}, runner.DefaultRegistry())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: crdify:", err)
		os.Exit(2)
	}
	tools := []tool{
		{"crdify v0.6.0", func(p pair) error {
			o, n := &apiextv1.CustomResourceDefinition{}, &apiextv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(p.old, o); err != nil {
				return err
			}
			if err := yaml.Unmarshal(p.new, n); err != nil {
				return err
			}
			crdifyRunner.Run(o, n)
			return nil
		}, nil},
		{"crdguard (schema rules + CEL judgement)", func(p pair) error {
			o, n := &source.Tree{}, &source.Tree{}
			source.AddFiles([]source.File{{Tree: o, Name: "old.yaml", Data: p.old}, {Tree: n, Name: "new.yaml", Data: p.new}})
			if len(o.CRDs) != 1 || len(n.CRDs) != 1 {
				return fmt.Errorf("%s: not one CRD a side", p.name)
			}
			rules.Compare(crd.Pair{Old: o.CRDs[0], New: n.CRDs[0]}, rules.Options{})
			return nil
		}, nil},
		// Not a tool: what the full pipeline cannot go below while it calls the API server's own
		// CRD update validation (decoding plus validation.Update, on every pair).
		{"floor: decode + API-server CRD update validation alone", func(p pair) error {
			o, n := &source.Tree{}, &source.Tree{}
			source.AddFiles([]source.File{{Tree: o, Name: "old.yaml", Data: p.old}, {Tree: n, Name: "new.yaml", Data: p.new}})
			if len(o.CRDs) != 1 || len(n.CRDs) != 1 {
				return fmt.Errorf("%s: not one CRD a side", p.name)
			}
			_, err := validation.Update(o.CRDs[0], n.CRDs[0])
			return err
		}, nil},
		{"crdguard (full: rules + API-server validation)", func(p pair) error {
			o, n := &source.Tree{}, &source.Tree{}
			source.AddFiles([]source.File{{Tree: o, Name: "old.yaml", Data: p.old}, {Tree: n, Name: "new.yaml", Data: p.new}})
			check.Trees(o, n, rules.Options{})
			return nil
		}, func(ps []pair) error {
			o, n := &source.Tree{}, &source.Tree{}
			var files []source.File
			for i, p := range ps {
				files = append(files, source.File{Tree: o, Name: fmt.Sprintf("%d/crd.yaml", i), Data: p.old}, source.File{Tree: n, Name: fmt.Sprintf("%d/crd.yaml", i), Data: p.new})
			}
			source.AddFiles(files)
			check.Trees(o, n, rules.Options{})
			return nil
		}},
	}

	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), %s, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), cpuModel())
	fmt.Printf("corpus: %d pairs, %.1f MB; largest pair: %s (%.0f KB)\n\n", len(pairs), mb(pairs), largest.name, float64(len(largest.old)+len(largest.new))/1e3)
	type set struct {
		title string
		pairs []pair
		times int
	}
	sets := []set{{"whole corpus", pairs, 1}, {"largest pair alone (x20)", []pair{largest}, 20}}
	if len(release) > 0 {
		// crdguard's full row compares the release at once (as check does on a repository),
		// the others each pair in turn.
		sets = append(sets, set{fmt.Sprintf("one release upgrading %d CRDs (latest pair of each, both corpora)", len(release)), release, -1})
	}
	for _, p := range hard { // each run starts cold, as a process of its own would
		sets = append(sets, set{p.name + " alone", []pair{p}, 1})
	}
	for _, set := range sets {
		results := make([]measure, len(tools))
		for i := range results {
			results[i].best = time.Duration(1<<63 - 1)
		}
		for r := 0; r < *runs; r++ {
			for i, t := range tools { // alternate the tools within every run
				m, err := run(t, set.pairs, set.times)
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench:", t.name, err)
					os.Exit(1)
				}
				if m.best < results[i].best {
					results[i] = m
				}
			}
		}
		print(set.title, tools, results)
	}
}

func print(title string, tools []tool, rs []measure) {
	fmt.Printf("### %s\n\n| tool | time | pairs/s | MB/s | allocations | allocated | peak heap |\n|---|---|---|---|---|---|---|\n", title)
	for i, t := range tools {
		m := rs[i]
		s := m.best.Seconds()
		fmt.Printf("| %s | %s | %.0f | %.1f | %d | %.0f MB | %.0f MB |\n", t.name, m.best.Round(time.Millisecond), float64(m.pairCount)/s, m.mb/s, m.allocs, float64(m.bytes)/1e6, float64(m.peakHeap)/1e6)
	}
	base := rs[0]
	for i := 1; i < len(tools); i++ {
		m := rs[i]
		fmt.Printf("\n%s / crdify: speed %.1f× faster, allocations %.2f×, allocated bytes %.2f×, peak heap %.2f×\n", tools[i].name,
			base.best.Seconds()/m.best.Seconds(), float64(m.allocs)/float64(base.allocs), float64(m.bytes)/float64(base.bytes), float64(m.peakHeap)/float64(base.peakHeap))
	}
	fmt.Println()
}

func run(t tool, pairs []pair, times int) (measure, error) {
	celproof.ForgetCompiled() // every measured run starts cold: no programs from earlier runs
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go sampleHeap(&peak, stop, done)
	start := time.Now()
	if times < 0 { // a release: at once where the tool can
		times = 1
		if t.runAll != nil {
			times = 0
			if err := t.runAll(pairs); err != nil {
				close(stop)
				<-done
				return measure{}, err
			}
		}
	}
	for n := 0; n < times; n++ {
		for _, p := range pairs {
			if err := t.run(p); err != nil {
				close(stop)
				<-done
				return measure{}, err
			}
		}
	}
	times = max(times, 1)
	elapsed := time.Since(start)
	close(stop)
	<-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return measure{best: elapsed, allocs: after.Mallocs - before.Mallocs, bytes: after.TotalAlloc - before.TotalAlloc,
		peakHeap: peak.Load(), pairCount: len(pairs) * times, mb: mb(pairs) * float64(times)}, nil
}

// sampleHeap records the largest live heap seen while a tool runs.
func sampleHeap(peak *atomic.Uint64, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(200 * time.Microsecond)
	defer t.Stop()
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func mb(pairs []pair) float64 {
	n := 0
	for _, p := range pairs {
		n += len(p.old) + len(p.new)
	}
	return float64(n) / 1e6
}

func load(root string) ([]pair, error) {
	f, err := os.Open(filepath.Join(root, "pairs.tsv"))
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	defer f.Close()
	var pairs []pair
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 4 {
			continue
		}
		dir := filepath.Join(root, c[0], c[1], c[2]+"__"+c[3])
		o, err := os.ReadFile(filepath.Join(dir, "old.yaml"))
		if err != nil {
			return nil, err
		}
		n, err := os.ReadFile(filepath.Join(dir, "new.yaml"))
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pair{name: strings.Join(c[:4], " "), old: o, new: n})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].name < pairs[j].name })
	return pairs, nil
}

// latestOfEach keeps, of every CRD, the pair that upgrades to its latest release.
func latestOfEach(pairs []pair) []pair {
	latest := map[string]pair{}
	for _, p := range pairs {
		f := strings.Fields(p.name) // repo crd from to
		key := f[0] + " " + f[1]
		if q, ok := latest[key]; !ok || semverLess(strings.Fields(q.name)[3], f[3]) {
			latest[key] = p
		}
	}
	out := slices.Collect(maps.Values(latest))
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// semverLess compares release tags such as v1.10.0 and v1.9.2 by their numbers.
func semverLess(a, b string) bool {
	na, nb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < min(len(na), len(nb)); i++ {
		x, errX := strconv.Atoi(na[i])
		y, errY := strconv.Atoi(nb[i])
		if errX != nil || errY != nil {
			if na[i] != nb[i] {
				return na[i] < nb[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(na) < len(nb)
}

// loadDirs reads the pairs of a folder of <name>/{old,new}.yaml, by name.
func loadDirs(root string) ([]pair, error) {
	olds, err := filepath.Glob(filepath.Join(root, "*", "old.yaml"))
	if err != nil || len(olds) == 0 {
		return nil, fmt.Errorf("reading the pairs of %s: none found (%v)", root, err)
	}
	var pairs []pair
	for _, o := range olds {
		dir := filepath.Dir(o)
		old, err := os.ReadFile(o)
		if err != nil {
			return nil, err
		}
		n, err := os.ReadFile(filepath.Join(dir, "new.yaml"))
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pair{name: filepath.Base(dir), old: old, new: n})
	}
	return pairs, nil
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}
