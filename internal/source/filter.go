package source

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Filter narrows which files are read: config paths (default: everything) and exclude globs.
// Globs use / separators and may contain ** for any number of folders.
type Filter struct {
	Paths   []string
	Exclude []string
	// SkipTests leaves out the files in test and fixture folders (Facts.Test) that no Paths
	// glob names: the default configuration's exclusion, which an exclude list of one's own
	// replaces (policy.Config.Filter).
	SkipTests bool
	// Helm says how the charts of the files read are rendered.
	Helm HelmSettings
}

// Validate reports the first malformed glob.
func (f Filter) Validate() error {
	for _, p := range append(append([]string{}, f.Paths...), f.Exclude...) {
		if err := ValidGlob(p); err != nil {
			return err
		}
	}
	return nil
}

// ValidGlob reports whether a glob is well formed (an unclosed [ is not).
func ValidGlob(p string) error {
	if _, err := path.Match(strings.ReplaceAll(p, "**", "x"), ""); err != nil {
		return fmt.Errorf("bad glob %q: %w", p, err)
	}
	return nil
}

// Allows reports whether a slash-separated path relative to the root is read.
func (f Filter) Allows(name string) bool {
	if !IsManifest(name) {
		return false
	}
	for _, ex := range f.Exclude {
		if Match(ex, name) {
			return false
		}
	}
	test := ""
	if f.SkipTests {
		test = PathFacts(name).Test
	}
	if len(f.Paths) == 0 {
		return test == ""
	}
	for _, p := range f.Paths {
		if Match(p, name) && (test == "" || namesTestFolder(p, name)) {
			return true
		}
	}
	return false
}

// Excluded reports whether an exclude glob names a path relative to the root: kustomizations
// it names are never built.
func (f Filter) Excluded(name string) bool {
	return slices.ContainsFunc(f.Exclude, func(ex string) bool { return Match(ex, name) })
}

// LeavesOutTest reports whether the filter leaves a manifest out only because it lies in a
// test or fixture folder: a paths glob that names the folder, or an exclude list of one's own,
// would read it.
func (f Filter) LeavesOutTest(name string) bool {
	if !f.SkipTests || PathFacts(name).Test == "" || f.Allows(name) {
		return false
	}
	all := f
	all.SkipTests = false
	return all.Allows(name)
}

// namesTestFolder reports whether a glob spells out a test or fixture folder of the file's path
// ("test/e2e/**" and "**/fixtures/**" do; "**/crds/**" and "**" do not), so that a paths entry
// brings test inputs back exactly where it is written to.
func namesTestFolder(glob, name string) bool {
	dirs := strings.Split(path.Dir(name), "/")
	return slices.ContainsFunc(strings.Split(strings.Trim(glob, "/"), "/"), func(seg string) bool {
		return isTestFolder(seg) && slices.Contains(dirs, seg)
	})
}

// Match reports whether name matches a glob where * and ? stay within a folder and ** spans any
// number of folders. A pattern that names a folder also matches everything below it.
func Match(pattern, name string) bool {
	return matchParts(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(name, "/"))
}

func matchParts(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchParts(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return true // the pattern named a folder (or the file itself)
}
