package source

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/crdguard/crdguard/internal/crd"
)

// Facts is what one file is to the people who install the project: whether it ships or is an
// input of the project's own tests, and how. Source records it on each file it reads
// (Tree.Facts), so that rules, samples and reports read the same answer instead of judging
// paths again.
type Facts struct {
	// Test is the folder, from the root down to the first test or fixture folder
	// ("test", "pkg/gateway/fixtures", "hack/cel-tests"), of a file that is an input of the
	// project's tests rather than what it ships; "" for any other file.
	Test string
	// Negative is the folder of a file whose objects are written to be refused
	// ("hack/invalid-examples"): never samples; "" for any other file.
	Negative string
	// Bundle says the file holds CRD definitions together with other objects (an install
	// bundle, a namespace-install manifest, a release YAML, a file of several CRDs): users
	// apply it as a whole, often with pruning.
	Bundle bool
	// Release is the version a file in a releases/, release/ or dist/ folder carries in its
	// name or folder (releases/v1.2.0/install.yaml, dist/widgets-1.26.0-rc1.yaml): a release's
	// own bundle, kept as it was; "" for any other file.
	Release string
	// Chart is the folder of the Helm chart the file belongs to, named as the file is: the
	// nearest folder above it that holds a Chart.yaml (helm refuses to load a chart without
	// one); "" outside charts, and when the tree cannot tell (see Tree.HasFile).
	Chart string
	// Helm is where in its chart the file lies: HelmCRDs or HelmTemplates, "" elsewhere.
	Helm string
	// ChartLike is, for a file outside charts, the folder above its crds/ or templates/ folder
	// when that folder has a values.yaml or a Chart.template.yaml but no Chart.yaml: a chart
	// helm refuses to load (chartLikeOf).
	ChartLike string
}

// Ships reports whether the file is part of what the project ships: not a test input.
func (f Facts) Ships() bool { return f.Test == "" }

// testFolders are the folder names that hold test inputs rather than what a project ships,
// chosen from what operator repositories do: Go's testdata, test and tests suites
// (kubebuilder's test/e2e), e2e, fixtures (Gateway API bundles under integration/fixtures and
// pkg/**/fixtures), __fixtures__ (Jest snapshots), kuttl and chainsaw suites.
var testFolders = map[string]bool{
	"test": true, "tests": true, "testdata": true, "test-data": true, "test_data": true,
	"e2e": true, "fixtures": true, "__fixtures__": true, "kuttl": true, "chainsaw": true,
}

// testSuffixes mark a folder of test inputs by its name's end: hack/cel-tests,
// hack/validation_tests, e2e-fixtures style names.
var testSuffixes = []string{"-tests", "_tests", "-fixtures", "_fixtures"}

// negativeFolders hold objects written to be refused (Gateway API's hack/invalid-examples,
// CEL test inputs): they are test inputs of the validation, never samples to keep valid.
var negativeFolders = map[string]bool{
	"invalid": true, "invalid-examples": true, "invalid_examples": true, "negative": true,
	"negative-examples": true, "negative_examples": true, "bad-examples": true,
}

// releaseFolders hold the bundles of releases, one file or folder per version.
var releaseFolders = map[string]bool{"releases": true, "release": true, "dist": true}

// releaseVersion finds a version in a release file's path below its folder: v1.2, 1.26.0-rc1.
var releaseVersion = regexp.MustCompile(`(?:^|[^0-9A-Za-z.])v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z][0-9A-Za-z.]*)?)(?:$|[^0-9A-Za-z.])`)

// ReleaseAtMost reports whether a release version (Facts.Release) is older than or as old as
// another; false when either does not parse.
func ReleaseAtMost(v, other string) bool {
	a, errA := version.ParseGeneric(v)
	b, errB := version.ParseGeneric(other)
	if errA != nil || errB != nil {
		return false
	}
	if pa, err := version.ParseSemantic(complete(v)); err == nil {
		if pb, err := version.ParseSemantic(complete(other)); err == nil {
			return !pb.LessThan(pa) // pre-releases come before their release
		}
	}
	return !b.LessThan(a)
}

// complete writes 1.26 as 1.26.0 (before a pre-release), as semantic versions need.
func complete(v string) string {
	core, pre, _ := strings.Cut(v, "-")
	if strings.Count(core, ".") == 1 {
		core += ".0"
	}
	if pre != "" {
		return core + "-" + pre
	}
	return core
}

// PathFacts is what a path alone says about a file (slash-separated, relative to the
// repository or folder root). Only folder names count: config/crd/bases/fixtures.yaml ships.
func PathFacts(rel string) Facts {
	var f Facts
	dirs := strings.Split(path.Dir(rel), "/")
	if i := slices.IndexFunc(dirs, func(d string) bool { return releaseFolders[d] }); i >= 0 {
		below := strings.Join(append(slices.Clone(dirs[i+1:]), strings.TrimSuffix(path.Base(rel), path.Ext(rel))), "/")
		if m := releaseVersion.FindStringSubmatch(below); m != nil {
			f.Release = m[1]
		}
	}
	for i, d := range dirs {
		if f.Test == "" && isTestFolder(d) {
			f.Test = strings.Join(dirs[:i+1], "/")
		}
		if f.Negative == "" && (negativeFolders[d] || hasSuffix(d, "-tests", "_tests")) {
			f.Negative = strings.Join(dirs[:i+1], "/")
		}
	}
	return f
}

func isTestFolder(d string) bool { return testFolders[d] || hasSuffix(d, testSuffixes...) }

// hasSuffix reports whether a name is longer than one of the suffixes and ends in it.
func hasSuffix(d string, suffixes ...string) bool {
	return slices.ContainsFunc(suffixes, func(s string) bool { return len(d) > len(s) && strings.HasSuffix(d, s) })
}

// Facts returns what the tree recorded about one of its files when it read it; for a file it
// did not read itself (an unchanged copy added beside a git comparison), what its path says.
func (t *Tree) Facts(file string) Facts {
	if f, ok := t.facts[file]; ok {
		return f
	}
	f := PathFacts(t.rel(file))
	f.Chart, f.Helm, f.ChartLike = t.helmOf(file)
	return f
}

// InFolder reports whether a path lies in a folder with one of the names.
func InFolder(rel string, names map[string]bool) bool {
	return slices.ContainsFunc(strings.Split(path.Dir(rel), "/"), func(d string) bool { return names[d] })
}

// HasCounterpart reports whether the tree read the counterpart of a file of the other tree
// (SameInput): the file is still there, not deleted.
func (t *Tree) HasCounterpart(other *Tree, file string) bool {
	for name := range t.facts {
		if SameInput(other, file, t, name) {
			return true
		}
	}
	return false
}

// LeftOutNotice says how many changed files with CRDs the default configuration left out for
// lying in test and fixture folders, and in which folders (a few named, the rest counted).
func LeftOutNotice(files []string) string {
	count := map[string]int{}
	var folders []string
	for _, f := range files {
		d := PathFacts(f).Test
		if count[d] == 0 {
			folders = append(folders, d)
		}
		count[d]++
	}
	slices.Sort(folders)
	const shown = 5
	var where []string
	for _, d := range folders[:min(len(folders), shown)] {
		where = append(where, fmt.Sprintf("%s/: %d", d, count[d]))
	}
	if len(folders) > shown {
		where = append(where, fmt.Sprintf("%d more folders", len(folders)-shown))
	}
	what := "changed files with CRDs"
	if len(files) == 1 {
		what = "changed file with CRDs"
	}
	return fmt.Sprintf("%d %s in test and fixture folders not compared (%s): they are inputs of tests, not what the project ships; a paths glob that names the folder, or an exclude list of your own, compares them", len(files), what, strings.Join(where, ", "))
}

// TestOnlyFolders returns, when the filter (without paths) leaves out test folders and reads no
// file of the commit that holds a CRD while some test or fixture folders do, those folders (sorted): every
// CRD of the repository is a test input, and comparing nothing would pass silently. Nil when a
// file the filter reads holds a CRD, when no file holds one, or when telling would take more
// than maxScan reads (the bound the paths check reads under).
func (r *Repo) TestOnlyFolders(c *object.Commit, f Filter) ([]string, error) {
	if !f.SkipTests || len(f.Paths) > 0 {
		return nil, nil // paths: a glob that reads no CRD is the paths check's error
	}
	m, err := r.manifests(c, nil)
	if err != nil {
		return nil, err
	}
	folders := map[string]bool{}
	reads := 0
	for _, name := range m.names {
		read, test := f.Allows(name), f.LeavesOutTest(name)
		if !read && (!test || folders[PathFacts(name).Test]) {
			continue
		}
		if reads++; reads > maxScan {
			return nil, nil
		}
		data, ok := m.read(name)
		if !ok || !crd.MentionsCRD(data) {
			continue // a blob a partial clone lacks tells nothing
		}
		if read {
			if crd.HoldsCRD(data) { // not a file that only names the kind
				return nil, nil
			}
			continue
		}
		folders[PathFacts(name).Test] = true
	}
	return slices.Sorted(maps.Keys(folders)), nil
}

// TestOnlyError words the configuration error of a repository whose CRDs all lie in test
// folders.
func TestOnlyError(folders []string) error {
	shown := folders[:min(len(folders), 5)]
	more := ""
	if len(folders) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(folders)-len(shown))
	}
	return fmt.Errorf("all CRDs found are in test and fixture folders (%s/%s), which are not compared by default; set paths to compare them, e.g. paths: [%q]", strings.Join(shown, "/, "), more, shown[0]+"/**")
}
