// Package source reads inputs (files, directories, later git commits), finds the CRD documents
// in them by content, and pairs the two sides of a comparison by CRD name, not by file path.
package source

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
)

// NoCRDNotice ends the notice for a file the user named that holds no CRD.
const NoCRDNotice = ": no CustomResourceDefinition in this file"

// MaxFileSize is the largest file read; bigger files are reported, never loaded. The largest
// real CRD in the corpus (Gateway API HTTPRoute) is about 340 KB.
const MaxFileSize = 16 << 20

// Tree is the CRDs found in one side of a comparison.
type Tree struct {
	// CRDs are all CRD definitions, in the order they were read.
	CRDs []*crd.CRD
	// Patches are the CRD documents that are not definitions (kustomize patches, assertions,
	// stubs): never compared, only applied where a kustomization says so (kustomize.go).
	Patches []*crd.CRD
	// Problems are documents that look like CRDs but cannot be decoded.
	Problems []crd.Problem
	// Notices say what was skipped and why (binary files, …).
	Notices []string
	// Skipped are templates that could not be checked (file:line: why); the caller names the
	// side.
	Skipped []string
	// Unread are the CRDs of skipped templates (name where known, file, line, why): they are
	// neither removed nor added, and the other side's copy cannot be compared with them.
	Unread []crd.Problem
	// Unknown are files that were not read, or do not parse, and do not look like CRDs (a file
	// over MaxFileSize, a binary file, YAML with a syntax error), named after the CRDs their
	// text may name (Problem.Name, "" for none): the CRDs of their counterpart on the other
	// side, and the other side's CRDs they name that this side does not read, are neither added
	// nor removed but invalid-crd; with no such CRDs they say nothing (a notice says what was
	// skipped for size).
	Unknown []crd.Problem
	// NotRendered are the charts that did not render, the templates that held CRDs and rendered
	// none, and the templates outside any chart that do not parse (rule chart-not-rendered), and
	// the kustomizations kustomize refuses to build (kustomization-not-built).
	NotRendered []ChartProblem
	// Objects are the other Kubernetes objects of the files (samples), when KeepObjects is set.
	Objects []*crd.Object
	// Input is the file the tree was read from when a comparison names one file (diff a.yaml
	// b.yaml): that file is the counterpart of the other side's, whatever their names.
	Input string
	// Changed are the files a git comparison changed on this side; nil when every file counts
	// as changed (folders and files compared as they are).
	Changed map[string]bool
	// KeepObjects makes AddFile keep the non-CRD objects it reads.
	KeepObjects bool
	// Root is the folder the tree was read from ("" for a commit): copies of a CRD are paired
	// by their path under it.
	Root string
	// Go is what the side's Go sources say of embedded types, given to the pairs (nil: none).
	Go crd.GoTypes

	// facts are what source knows of each file it read (Facts), by file.
	facts map[string]Facts
	// HasFile reports whether a file (named as files are) exists on this side, for the Helm
	// charts files belong to (a Chart.yaml above them); nil: no file is taken for part of a
	// chart. hasFile remembers its answers.
	HasFile func(name string) bool
	hasFile map[string]bool
	// ChartFiles reads every file of a chart folder, by name relative to it; nil: the tree
	// cannot read its charts' other files.
	ChartFiles func(chart string) (map[string][]byte, error)

	// unrendered are the charts (by path under the root) that did not render; empty the
	// templates that held CRDs and rendered none, until judgeEmpty; delivery the value set of
	// each CRD rendered with a named one (rendered.go).
	unrendered []string
	empty      []emptyTemplate
	delivery   map[*crd.CRD]string
	// outputs are what each rendered template gave, by value set and file.
	outputs map[[2]string]string

	// listing maps each kustomization read to the files it lists as resources, each with the
	// line of its entry (Listing).
	listing map[string]map[string]int

	// remote are the remote resources of the kustomizations read (Remotes).
	remote []Remote

	// remoteVia maps an installer (a kustomization's path under the root, or a chart folder's)
	// to the remote resources it installs, directly or through the folders it lists (LeftTo).
	remoteVia map[string][]Remote

	// kz builds the tree's kustomizations (kustomize.go); nil: none are built.
	kz *kustomizer

	// kustomizedBy maps a definition's file to the first kustomization that lists it as a
	// resource: two different definitions of one name there are duplicates, as in one file.
	kustomizedBy map[string]string

	// subtrees holds once what the definitions read into the tree have in common, with each
	// other and with those of the tree it is compared with (nil: nothing is shared).
	subtrees *crd.Subtrees
}

// ReadPath reads a file or, recursively, a directory's YAML and JSON files; with objects set it
// keeps the other Kubernetes objects too. An unreadable path is an error; what is wrong inside
// files is recorded in the tree.
func ReadPath(path string, objects bool) (*Tree, error) {
	return ReadPathWith(path, objects, HelmSettings{})
}

// ReadPathWith is ReadPath with the settings the charts it finds are rendered with. Every chart
// of a folder is rendered (its templates are never read as they are); a file named alone that
// is a chart's template is what its chart renders from it.
func ReadPathWith(path string, objects bool, helm HelmSettings) (*Tree, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	t := &Tree{KeepObjects: objects, HasFile: dirHasFile, ChartFiles: dirChartFiles}
	if info.IsDir() {
		t.Root = filepath.ToSlash(path)
	}
	if !info.IsDir() {
		data, err := readLimited(path)
		if err != nil {
			return nil, err
		}
		t.Input = filepath.ToSlash(path)
		if chart, ok := t.ChartTemplate(t.Input); ok {
			t.renderCharts(diskFS{}, []string{chart}, helm, func(c *crd.CRD) bool { return c.File == t.Input })
			t.empty = slices.DeleteFunc(t.empty, func(e emptyTemplate) bool { return e.file != t.Input })
			t.judgeEmpty(nil)
			if len(t.CRDs)+len(t.Patches)+len(t.Problems)+len(t.NotRendered) == 0 {
				t.Notices = append(t.Notices, t.Input+NoCRDNotice)
			}
			return t, nil
		}
		t.AddFile(t.Input, data, true)
		return t, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && IsManifest(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	sort.Strings(files)
	adds := make([]File, 0, len(files))
	charts := map[string]bool{}
	for _, f := range files {
		name := filepath.ToSlash(f)
		if chart, ok := t.ChartTemplate(name); ok {
			charts[chart] = true // rendered, never read as it is
			continue
		}
		if filepath.Base(f) == "Chart.yaml" {
			charts[t.topChart(filepath.ToSlash(filepath.Dir(f)))] = true
		}
		data, err := readLimited(f)
		if err != nil {
			return nil, err
		}
		adds = append(adds, File{Tree: t, Name: filepath.ToSlash(f), Data: data})
	}
	AddFiles(adds)
	t.renderCharts(diskFS{}, sortedKeys(charts), helm, nil)
	t.judgeEmpty(nil)
	// Every kustomization of the folder is built, as git mode builds every changed one: what
	// each installs tells which CRDs leave it.
	t.kustomizeFrom(diskFS{}, nil)
	for _, f := range adds {
		if slices.Contains(kustomizationNames, filepath.Base(f.Name)) {
			t.build(f.Name)
		}
	}
	t.kustomize()
	return t, nil
}

// IsManifest reports whether a file name looks like a YAML or JSON manifest.
func IsManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// readLimited reads at most MaxFileSize+1 bytes, so an oversized file is noticed without being
// loaded whole.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return readCapped(path, f)
}

// readCapped reads at most MaxFileSize+1 bytes: enough to notice an oversized file.
func readCapped(path string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// AddFile finds the CRDs in one file's content. explicit says the user named the file itself,
// so a file that cannot hold CRDs is worth a problem rather than a silent skip.
func (t *Tree) AddFile(name string, data []byte, explicit bool) {
	t.merge(t.parseFile(name, data, explicit))
}

// File is one file to add to a tree.
type File struct {
	Tree     *Tree
	Name     string
	Data     []byte
	Explicit bool
	// Unreadable, when set, says why the file's content could not be had: the file is Unread,
	// so that what it held is never taken for nothing.
	Unreadable string
}

// AddFiles parses files on all cores (YAML parsing is most of crdguard's work) and adds each to
// its tree in the order given, so the result is the same as adding them one by one.
//
// A file whose text an earlier file of the same tree holds as well (kyverno keeps its CRDs in
// config/crds and again in the CLI's data folder, 5 MB on each side) is parsed once: its
// definitions are the earlier file's under its own name, sharing their documents, as the copies
// of one blob do among unchanged files (Repo.addUnchanged).
func AddFiles(files []File) {
	parsed := make([]*Tree, len(files))
	textOf := sameTexts(files)
	Parallel(len(files), func(i int) {
		f := files[i]
		switch {
		case f.Unreadable != "":
			parsed[i] = &Tree{Unread: []crd.Problem{{File: f.Name, Line: 1, Message: f.Unreadable}}}
		case textOf[i] == i:
			parsed[i] = f.Tree.parseFile(f.Name, f.Data, f.Explicit)
		}
	})
	for i, f := range files {
		if parsed[i] == nil {
			j := textOf[i]
			if parsed[i] = parsed[j].copyAs(files[j].Name, f.Name, f.Tree); parsed[i] == nil {
				parsed[i] = f.Tree.parseFile(f.Name, f.Data, f.Explicit)
			}
		}
		f.Tree.merge(parsed[i])
	}
}

// sameTexts maps each file to the first file of the same tree with the same text (itself when
// there is none); files named on the command line and unreadable ones are their own.
func sameTexts(files []File) []int {
	type key struct {
		tree *Tree
		sum  uint64
	}
	first := make([]int, len(files))
	seen := map[key]int{}
	seed := maphash.MakeSeed() // equal sums are confirmed byte for byte below
	for i, f := range files {
		first[i] = i
		if f.Unreadable != "" || f.Explicit || len(f.Data) == 0 {
			continue
		}
		k := key{f.Tree, maphash.Bytes(seed, f.Data)}
		if j, ok := seen[k]; ok && bytes.Equal(files[j].Data, f.Data) {
			first[i] = j
			continue
		}
		seen[k] = i
	}
	return first
}

// copyAs is the partial tree of file to that holds the same text as p's file from: p's
// definitions and patches under to's name, sharing their documents and Objects, with the facts
// of to's path. It is nil when p holds anything else (problems, notices, objects, templates):
// what those say is worded for from, and to is parsed on its own.
func (p *Tree) copyAs(from, to string, t *Tree) *Tree {
	if len(p.Problems)+len(p.Notices)+len(p.Skipped)+len(p.Unread)+len(p.Unknown)+len(p.Objects)+len(p.NotRendered) > 0 {
		return nil
	}
	facts := PathFacts(t.rel(to))
	facts.Bundle = p.facts[from].Bundle
	return &Tree{facts: map[string]Facts{to: facts}, CRDs: underName(p.CRDs, to), Patches: underName(p.Patches, to)}
}

// underName is the documents cs as file holds them too: each under file's name, sharing its
// text, lines and Object with the original.
func underName(cs []*crd.CRD, file string) []*crd.CRD {
	var out []*crd.CRD
	for _, c := range cs {
		cp := *c
		cp.File = file
		out = append(out, &cp)
	}
	return out
}

func (t *Tree) merge(p *Tree) {
	for _, c := range p.CRDs {
		t.subtrees.Share(c.Object)
	}
	t.CRDs = append(t.CRDs, p.CRDs...)
	t.Patches = append(t.Patches, p.Patches...)
	t.Problems = append(t.Problems, p.Problems...)
	t.Notices = append(t.Notices, p.Notices...)
	t.Skipped = append(t.Skipped, p.Skipped...)
	t.Unread = append(t.Unread, p.Unread...)
	t.Unknown = append(t.Unknown, p.Unknown...)
	t.Objects = append(t.Objects, p.Objects...)
	t.NotRendered = append(t.NotRendered, p.NotRendered...)
	for name, f := range p.facts {
		if t.facts == nil {
			t.facts = map[string]Facts{}
		}
		f.Chart, f.Helm, f.ChartLike = t.helmOf(name) // here, not in parseFile: files are merged one at a time
		t.facts[name] = f
	}
}

// parseFile reads one file into a new partial tree; it touches nothing shared.
func (t *Tree) parseFile(name string, data []byte, explicit bool) *Tree {
	// A file named on the command line is what the user asked to compare, wherever it lies.
	facts := Facts{}
	if !explicit {
		facts = PathFacts(t.rel(name))
	}
	p := &Tree{facts: map[string]Facts{name: facts}}
	switch {
	case len(data) > MaxFileSize:
		tooLarge := crd.Problem{File: name, Line: 1, Message: fmt.Sprintf("file is larger than the %d MiB limit and was not read", MaxFileSize>>20), TooLarge: true}
		switch {
		case crd.MentionsCRD(data[:min(len(data), 1<<20)]):
			p.Problems = append(p.Problems, tooLarge)
		case explicit:
			// Named by the user but not like a CRD: what the other side's file held is not
			// known to be gone (see Tree.Unknown).
			p.Unknown = append(p.Unknown, tooLarge)
			p.Notices = append(p.Notices, fmt.Sprintf("%s: skipped, larger than %d MiB and not like a CRD in its first MiB", name, MaxFileSize>>20))
		default:
			p.Unknown = append(p.Unknown, tooLarge)
			p.Notices = append(p.Notices, fmt.Sprintf("%s: skipped, larger than %d MiB", name, MaxFileSize>>20))
		}
		return p
	case bytes.IndexByte(data, 0) >= 0:
		binary := crd.Problem{File: name, Line: 1, Message: "binary file, not YAML or JSON"}
		if explicit {
			p.Problems = append(p.Problems, binary)
		} else {
			p.Unknown = append(p.Unknown, binary) // matters only where the other side has a CRD
		}
		return p
	}
	spelled := bytes.Contains(data, []byte(crd.Kind)) // a broken file that says CustomResourceDefinition is a broken CRD file
	// YAML alone decides whether a file parses: {{ }} in a string is text. A file that does not
	// parse and is a template (charts' templates are rendered, never read here) is a template
	// outside any chart, which crdguard cannot render.
	read := crd.Read(name, data, t.KeepObjects)
	if len(read.Unparsed) > 0 && isTemplate(data) || len(read.Problems) > 0 && hasTemplate(data) {
		if clean, _ := detemplate(data); spelled || crd.EscapedCRD(clean) {
			p.NotRendered = append(p.NotRendered, outsideChart(name, data, read.Problems, t.HasFile))
		}
		return p // a template's objects are not samples: their values are not known
	}
	if !spelled && !explicit && len(read.CRDs) == 0 && len(read.Problems) == len(read.Unparsed) {
		// Most manifests in a repository are not CRDs. One that does not parse says nothing,
		// unless the other side has a CRD at its place or one its text names that would look
		// removed or added: then it is invalid-crd at the parser's line (Tree.Unknown, and
		// check's unreadable). A broken Helm values file elsewhere stays quiet.
		p.Objects, p.Unknown = read.Objects, read.Unparsed
		return p
	}
	// A file the user named is parsed whatever it holds: YAML that does not parse there is an
	// invalid-crd, never a file that "holds no CRD" (which would make the other side's CRDs
	// look removed). A file read for what it holds, although its text does not spell the kind
	// (written with escapes), is read as any CRD file.
	docs := read.CRDs
	p.Problems, p.Objects = read.Problems, read.Objects
	for _, c := range docs {
		if c.Patch {
			p.Patches = append(p.Patches, c)
		} else {
			p.CRDs = append(p.CRDs, c)
		}
	}
	if len(p.CRDs) > 0 && read.Count > 1 {
		f := p.facts[name]
		f.Bundle = true
		p.facts[name] = f
	}
	if explicit && len(docs) == 0 && len(p.Problems) == 0 {
		p.Notices = append(p.Notices, name+NoCRDNotice)
	}
	return p
}

// templateLine finds a template action where YAML structure is expected: a line that starts
// with {{, or a key or list item whose value starts with {{. Template text inside descriptions
// stays in the middle of a line and does not count.
func templateLine(data []byte) (int, bool) {
	for i, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if strings.HasPrefix(s, "#") {
			continue
		}
		s = strings.TrimPrefix(s, "- ")
		if strings.HasPrefix(s, "{{") {
			return i + 1, true
		}
		if k := strings.Index(s, ": {{"); k >= 0 && !strings.ContainsAny(s[:k], `"'`) {
			return i + 1, true
		}
	}
	return 0, false
}
