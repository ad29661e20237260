package source

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// Comparison is what two commits hold: the CRDs of each side that can matter, and the diff.
type Comparison struct {
	Old, New *Tree
	Diff     *Diff
	// LeftOut are the changed files with CRDs that the filter left out only because they lie
	// in test or fixture folders (Filter.LeavesOutTest), sorted: what the notice counts.
	LeftOut []string
	// Unread are the unchanged manifests whose content could not be read (a partial clone that
	// could not fetch), in path order: any of them may define a CRD the change seems to add.
	Unread []string

	// sameRendered are the CRDs of templates that rendered the same on both sides: unchanged
	// copies, added back where a changed CRD has a copy among them.
	sameRendered []*crd.CRD
}

// Compare reads the CRDs that a change between two commits can affect. Only files the diff
// touches are parsed, plus unchanged files that mention a CRD name found in them, so a CRD that
// moved between files still pairs with itself and a duplicate of it elsewhere is found. Only
// manifests the filter allows are ever read: the cost follows the changed manifests, not the
// changed files.
func (r *Repo) Compare(oldC, newC *object.Commit, f Filter) (*Comparison, error) {
	return r.CompareWorking(oldC, newC, f, nil, nil)
}

// CompareWorking is Compare with newC's manifests overlaid by working (path → content, nil for
// deleted), the uncommitted changes of WorkingChanges. The changed manifests samples allows
// (nil: none) are in the diff too, paired as moved with the others as GitHub pairs them, so
// that findings on samples land on the lines the pull request shows; they are never read for
// CRDs.
func (r *Repo) CompareWorking(oldC, newC *object.Commit, f Filter, working map[string][]byte, samples *Filter) (*Comparison, error) {
	diffed := func(name string) bool { return f.Allows(name) || samples != nil && samples.Allows(name) }
	oldTree, err := oldC.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(oldC), err)
	}
	newTree, err := newC.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(newC), err)
	}
	// No rename detection here: go-git's reads every added and deleted blob of any type.
	changes, err := object.DiffTreeWithOptions(context.Background(), oldTree, newTree, nil)
	if err != nil {
		return nil, fmt.Errorf("diffing %s..%s: %w", short(oldC), short(newC), err)
	}
	changed := map[string]bool{}
	held := map[plumbing.Hash][]byte{}
	var all []changedFile
	leftOut := map[string]bool{}
	for _, ch := range changes {
		from, to := ch.From.Name, ch.To.Name
		changed[from], changed[to] = true, true
		r.leftOut(leftOut, f, from, ch.From.TreeEntry)
		r.leftOut(leftOut, f, to, ch.To.TreeEntry)
		var c changedFile
		if from != "" && diffed(from) {
			c.from = from
			c.old, c.oldErr = r.readBlob(from, ch.From.TreeEntry)
			hold(held, ch.From.TreeEntry, c.old, c.oldErr)
		}
		if to != "" && diffed(to) {
			c.to = to
			c.new, c.newErr = r.readBlob(to, ch.To.TreeEntry)
			hold(held, ch.To.TreeEntry, c.new, c.newErr)
		}
		all = append(all, c)
	}
	if all, err = r.overlay(all, oldTree, working, changed); err != nil {
		return nil, err
	}
	var deleted, added, modified []changedFile
	for _, c := range all {
		switch {
		case c.oldErr != nil || c.newErr != nil:
			modified = append(modified, c) // paired with nothing: what it held is unknown
		case c.from != "" && c.to != "":
			// Equal contents are an edit undone in the working tree; files over the size limit
			// were read only that far, and may differ past it.
			if c.from != c.to || len(c.old) > MaxFileSize || !bytes.Equal(c.old, c.new) {
				modified = append(modified, c)
			}
		case c.from != "":
			deleted = append(deleted, c)
		case c.to != "":
			added = append(added, c)
		}
	}
	delete(changed, "")
	readOld, readNew := r.reader(oldTree, nil), r.reader(newTree, working)
	// A big repository's definitions are mostly the same CRDs many times over (bundles, charts,
	// kustomize builds, release manifests, the two sides): held once (crd.Subtrees).
	shared := crd.NewSubtrees()
	cmp := &Comparison{
		Old:  &Tree{HasFile: gitHasFile(readOld), ChartFiles: gitChartFiles(oldTree, readOld), subtrees: shared},
		New:  &Tree{HasFile: gitHasFile(readNew), ChartFiles: gitChartFiles(newTree, readNew), subtrees: shared},
		Diff: &Diff{read: readNew},
	}
	for name := range leftOut {
		cmp.LeftOut = append(cmp.LeftOut, name)
	}
	sort.Strings(cmp.LeftOut)
	files, complete := pairRenames(deleted, added)
	if !complete {
		cmp.New.Notices = append(cmp.New.Notices, fmt.Sprintf("%d deleted and %d added manifests: more than git's rename limit (%d), so only identical files were paired as moved, as git and GitHub do", len(deleted), len(added), RenameLimit))
	}
	files = append(files, modified...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].key() < files[j].key() })
	var adds []File
	cmp.New.Changed = map[string]bool{}
	oldFS, newFS := &gitFS{r: r, root: oldTree, held: held}, &gitFS{r: r, root: newTree, working: working, held: held}
	rendered, err := r.renderChanged(cmp, oldFS, newFS, changed, f)
	if err != nil {
		return nil, err
	}
	for _, c := range files {
		// A chart's templates are what the chart renders (renderChanged), never read as they are.
		if _, tpl := cmp.Old.ChartTemplate(c.from); c.from != "" && f.Allows(c.from) && !tpl {
			adds = append(adds, File{Tree: cmp.Old, Name: c.from, Data: c.old, Unreadable: blobProblem(c.oldErr)})
		}
		if _, tpl := cmp.New.ChartTemplate(c.to); c.to != "" && f.Allows(c.to) && !tpl {
			adds = append(adds, File{Tree: cmp.New, Name: c.to, Data: c.new, Unreadable: blobProblem(c.newErr)})
			cmp.New.Changed[c.to] = true
		}
		cmp.Diff.Add(LazyFileDiff(c.from, c.to, c.old, c.new)) // samples carry findings too
	}
	cmp.Old.kustomizeFrom(oldFS, f.Excluded)
	cmp.New.kustomizeFrom(newFS, f.Excluded)
	adds = append(adds, r.unlisted(cmp, files, newTree, changed, f)...)
	AddFiles(adds)
	if err := r.addUnchanged(cmp, newFS, changed, rendered, f); err != nil {
		return nil, err
	}
	r.judgeEmptyIn(cmp, oldFS, newFS, f)
	if cmp.Old.buildsDefinitions() || cmp.New.buildsDefinitions() {
		shedChanged(adds)
	}
	cmp.Old.kustomize()
	cmp.New.kustomize()
	return cmp, nil
}

// shedChanged drops the YAML trees of the changed files' definitions and patches until a
// finding is placed in one of them, when kustomize is about to build the definitions again:
// the builds are then a comparison's peak, and the trees are several times their text
// (argo-workflows v4.0.0 → v4.1.0: 100 MB for 22 MB of definitions, held while kustomize
// builds four 2.8 MB ones as 200 MB of its own nodes). A tree comes back, once, from the text
// the diff keeps anyway; where nothing is built, reading it twice would buy nothing.
func shedChanged(files []File) {
	for _, f := range files {
		data := f.Data
		crd.Shed(f.Name, func() ([]byte, error) { return data, nil }, append(slices.Clone(f.Tree.CRDs), f.Tree.Patches...))
	}
}

// hold records a blob read whole, by hash, for gitFS to serve again.
func hold(held map[plumbing.Hash][]byte, e object.TreeEntry, data []byte, err error) {
	if err == nil && data != nil && e.Mode.IsFile() {
		held[e.Hash] = data
	}
}

// leftOut adds a changed file to out when the filter leaves it out for lying in a test folder
// and it holds a CRD: a fixture folder full of kuttl steps is not worth a notice.
func (r *Repo) leftOut(out map[string]bool, f Filter, name string, e object.TreeEntry) {
	if name == "" || out[name] || !f.LeavesOutTest(name) {
		return
	}
	if data, err := r.readBlob(name, e); err == nil && crd.MentionsCRD(data[:min(len(data), MaxFileSize)]) {
		out[name] = true
	}
}

// reader reads files of a commit's tree by path, the working tree's changes (nil: deleted) laid
// over it, for kustomizations and the patches they name.
func (r *Repo) reader(tree *object.Tree, working map[string][]byte) func(string) ([]byte, bool) {
	return func(name string) ([]byte, bool) {
		if data, ok := working[name]; ok {
			return data, data != nil
		}
		e, err := tree.FindEntry(name)
		if err != nil || !e.Mode.IsFile() {
			return nil, false
		}
		data, err := r.readBlob(name, *e)
		return data, err == nil && data != nil && len(data) <= MaxFileSize
	}
}

// overlay applies the working tree's changes to the changed files of a comparison: a file
// changed in head gets its working content, a file head did not change is compared from the
// old commit's content.
func (r *Repo) overlay(all []changedFile, oldTree *object.Tree, working map[string][]byte, changed map[string]bool) ([]changedFile, error) {
	names := make([]string, 0, len(working))
	for name := range working {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := working[name]
		changed[name] = true
		i := slices.IndexFunc(all, func(c changedFile) bool { return c.to == name })
		if i < 0 {
			i = slices.IndexFunc(all, func(c changedFile) bool { return c.from == name && c.to == "" })
		}
		if i < 0 {
			c := changedFile{}
			if e, err := oldTree.FindEntry(name); err == nil && e.Mode.IsFile() {
				c.from = name
				c.old, c.oldErr = r.readBlob(name, *e)
			}
			all = append(all, c)
			i = len(all) - 1
		}
		all[i].to, all[i].new = name, data
		if data == nil {
			all[i].to = ""
		}
	}
	return all, nil
}

// changedFile is one changed manifest: its path and content on each side ("" and nil where it
// does not exist).
type changedFile struct {
	from, to string
	old, new []byte
	// oldErr and newErr say why a side could not be read (a blob missing from a partial clone).
	oldErr, newErr error
}

func (c changedFile) key() string {
	if c.from != "" {
		return c.from
	}
	return c.to
}

// pairRenames joins the deleted and added manifests that git pairs as moved into one change
// each, and keeps the others.
func pairRenames(deleted, added []changedFile) ([]changedFile, bool) {
	del, add := make([]Blob, len(deleted)), make([]Blob, len(added))
	for i, c := range deleted {
		del[i] = Blob{Path: c.from, Data: c.old}
	}
	for i, c := range added {
		add[i] = Blob{Path: c.to, Data: c.new}
	}
	renames, complete := Renames(del, add)
	out := make([]changedFile, 0, len(deleted)+len(added)-len(renames))
	paired := map[int]bool{}
	for _, rn := range renames {
		c := deleted[rn.From]
		c.to, c.new = added[rn.To].to, added[rn.To].new
		out = append(out, c)
		paired[-1-rn.From], paired[rn.To] = true, true
	}
	for i, c := range deleted {
		if !paired[-1-i] {
			out = append(out, c)
		}
	}
	for i, c := range added {
		if !paired[i] {
			out = append(out, c)
		}
	}
	return out, complete
}

// addUnchanged adds, to both sides, the CRDs of unchanged files whose names also occur in the
// changed files.
func (r *Repo) addUnchanged(cmp *Comparison, fsys *gitFS, changed, rendered map[string]bool, f Filter) error {
	tree := fsys.root
	names := map[string]bool{}
	for _, t := range []*Tree{cmp.Old, cmp.New} {
		for _, c := range t.CRDs {
			names[c.Name] = true
		}
		for _, c := range t.Patches {
			if c.Name != "" {
				names[c.Name] = true // a changed patch needs the definition it patches
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	needles := make([][]byte, 0, len(names))
	for n := range names {
		needles = append(needles, []byte(n))
	}
	// Unchanged definitions go first: they are what the cluster has, so a copy that the change
	// adds elsewhere is the duplicate.
	var unchanged []*crd.CRD
	charts := map[string]bool{} // unchanged charts whose templates may hold a copy
	// Release copies of a bundle are mostly one blob: it is read and parsed once, and each copy
	// is its CRDs under the copy's name (the documents, their text and lines are the same).
	byBlob := map[plumbing.Hash][]*crd.CRD{}
	err := eachFile(tree, func(name string, entry object.TreeEntry) error {
		if entry.Mode == filemode.Symlink || changed[name] || !f.Allows(name) {
			return nil
		}
		chart, tpl := cmp.New.ChartTemplate(name)
		if tpl && (rendered[chart] || charts[chart]) {
			return nil
		}
		if read, ok := byBlob[entry.Hash]; ok && !tpl {
			unchanged = append(unchanged, underName(read, name)...)
			return nil
		}
		data, err := r.readBlob(name, entry)
		if err != nil {
			// The file is the same on both sides, so nothing in it changed; say that it was not
			// read (a partial clone lacks unchanged blobs) and go on.
			cmp.New.Notices = append(cmp.New.Notices, fmt.Sprintf("%s: %s; it is unchanged, so it was left out: a copy in it of a changed CRD is not compared", name, blobProblem(err)))
			cmp.Unread = append(cmp.Unread, name)
			return nil
		}
		if !containsAny(data, needles) || !crd.MentionsCRD(data) { // the cheap test first
			if !tpl {
				byBlob[entry.Hash] = nil
			}
			return nil
		}
		if tpl {
			charts[chart] = true // rendered once below, the same on both sides
			return nil
		}
		one := &Tree{}
		one.AddFile(name, data, false)
		var read []*crd.CRD
		for _, c := range one.CRDs {
			if names[c.Name] {
				// A copy that decodes the same as an earlier one keeps that one's Object; the
				// copies of other releases hold what they have in common with the others once
				// (cloudnative-pg v1.29 → v1.30: 268 definitions, 155 distinct, took 52 MB of
				// heap, 6.5 MB shared).
				if !slices.ContainsFunc(unchanged, func(u *crd.CRD) bool { return u.Name == c.Name && c.ShareObject(u) }) {
					cmp.New.subtrees.Share(c.Object)
				}
				read = append(read, c)
			}
		}
		// Compared with nothing: the text is read again only to place a finding in it.
		crd.Shed(name, func() ([]byte, error) { return r.readBlob(name, entry) }, read)
		byBlob[entry.Hash] = read
		unchanged = append(unchanged, read...)
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range cmp.sameRendered {
		if names[c.Name] {
			unchanged = append(unchanged, c)
		}
	}
	if len(charts) > 0 {
		one := &Tree{HasFile: cmp.New.HasFile}
		one.renderCharts(fsys, sortedKeys(charts), f.Helm, func(c *crd.CRD) bool { return names[c.Name] && f.Allows(c.File) })
		unchanged = append(unchanged, one.CRDs...)
		for _, p := range one.NotRendered {
			cmp.New.Notices = append(cmp.New.Notices, fmt.Sprintf("%s:%d: unchanged chart %s did not render, so copies in it of the changed CRDs are not compared: %s", p.File, p.Line, p.Chart, p.Message))
		}
	}
	cmp.Old.CRDs = append(append([]*crd.CRD{}, unchanged...), cmp.Old.CRDs...)
	cmp.New.CRDs = append(append([]*crd.CRD{}, unchanged...), cmp.New.CRDs...)
	return nil
}

func containsAny(data []byte, needles [][]byte) bool {
	for _, n := range needles {
		if bytes.Contains(data, n) {
			return true
		}
	}
	return false
}
