package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/crdguard/crdguard/internal/crd"
)

// Repo is a git repository read through go-git: files are read as data from commits, and no
// code of the repository (hooks, filters, the git binary) ever runs. Nothing is ever written
// into the repository: commits it lacks (shallow and partial clones) are fetched into a
// temporary object store that Close removes.
type Repo struct {
	repo  *git.Repository
	store *overlay
	// Remote is the remote missing commits are fetched from; "origin" by default.
	Remote string
	// Token, when set, authenticates fetches (GitHub's GITHUB_TOKEN); it is never logged.
	Token string
	// InActions words the advice on missing history for a workflow (actions/checkout) rather
	// than for a local clone (git fetch).
	InActions bool
	// Fetched lists the commits that had to be fetched, for notices.
	Fetched []string
	// PullRequest, when set, is the pull request whose commits are read: a commit the remote
	// does not serve by SHA (a fork's head) is fetched as refs/pull/N/head instead.
	PullRequest int

	// wanted are the commits the comparison reads, fetched whole when a partial clone lacks one
	// of their objects; complete holds those fetched so.
	wanted   []plumbing.Hash
	complete map[plumbing.Hash]bool
	// searched remembers, by subtree and name, the files findFile found there.
	searched map[searchKey][]plumbing.Hash
}

// ErrNeedHistory says a commit is not in the clone and could not be fetched.
var ErrNeedHistory = errors.New("what the comparison needs is not in this clone and could not be fetched")

// OpenRepo opens the repository containing dir, looking upward like git does.
func OpenRepo(dir string) (*Repo, error) {
	disk, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("opening git repository at %s: %w", dir, err)
	}
	var worktree billy.Filesystem
	if wt, err := disk.Worktree(); err == nil {
		worktree = wt.Filesystem
	}
	store := &overlay{Storer: disk.Storer}
	if fs, ok := disk.Storer.(*filesystem.Storage); ok {
		// go-git opens a pack file anew for every object it reads unless it keeps them open:
		// walking the history of a file through hundreds of release tags was most of a run.
		// Its default cache of 96 MiB of objects stayed full of blobs crdguard had already
		// read and kept (a release's manifests run to megabytes each); a smaller one still
		// holds the trees every walk reads again and the bases of the deltas being resolved.
		kept := filesystem.NewStorageWithOptions(fs.Filesystem(), cache.NewObjectLRU(objectCacheSize), filesystem.Options{KeepDescriptors: true})
		store.Storer, store.kept = kept, kept
	}
	r := &Repo{Remote: "origin", store: store, complete: map[plumbing.Hash]bool{}}
	r.store.missing = r.fetchWanted
	if r.repo, err = git.Open(r.store, worktree); err != nil {
		return nil, fmt.Errorf("opening git repository at %s: %w", dir, err)
	}
	return r, nil
}

// objectCacheSize bounds go-git's cache of decoded objects.
const objectCacheSize = 16 * cache.MiByte

// Close removes the temporary store of fetched objects.
func (r *Repo) Close() error { return r.store.close() }

// Root is the folder of the working tree, or "" for a bare repository.
func (r *Repo) Root() string {
	wt, err := r.repo.Worktree()
	if err != nil {
		return ""
	}
	return wt.Filesystem.Root()
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Commit resolves a branch, tag, remote branch or SHA. A full SHA that is not in the clone (a
// shallow checkout) is fetched from the remote at depth 1.
func (r *Repo) Commit(ref string) (*object.Commit, error) {
	c, err := r.resolve(ref)
	if err == nil {
		r.want(c.Hash)
		return c, nil
	}
	if !fullSHA.MatchString(ref) {
		return nil, fmt.Errorf("resolving %q: %w", ref, err)
	}
	h := plumbing.NewHash(ref)
	if ferr := r.fetch([]plumbing.Hash{h}, 1); ferr != nil {
		return nil, fmt.Errorf("commit %s: %w (fetching from %s: %v); %s", ref, ErrNeedHistory, r.Remote, ferr, r.commitHint(ref))
	}
	if c, err = r.repo.CommitObject(h); err != nil {
		return nil, fmt.Errorf("commit %s: %w; %s", ref, ErrNeedHistory, r.commitHint(ref))
	}
	r.want(h)
	r.complete[h] = true
	return c, nil
}

// IsRelease reports whether a ref names a release: a tag, and no branch (local or origin's) of
// the same name.
func (r *Repo) IsRelease(ref string) bool {
	name := strings.TrimPrefix(ref, "refs/tags/")
	if _, err := r.repo.Reference(plumbing.NewTagReferenceName(name), false); err != nil {
		return false
	}
	return name != ref || !r.IsBranch(ref)
}

// IsBranch reports whether a ref names a branch (local or origin's), or is HEAD checked out on
// a branch.
func (r *Repo) IsBranch(ref string) bool {
	if ref == "HEAD" {
		h, err := r.repo.Reference(plumbing.HEAD, false)
		return err == nil && h.Type() == plumbing.SymbolicReference && h.Target().IsBranch()
	}
	for _, branch := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewRemoteReferenceName("origin", ref), plumbing.ReferenceName(ref)} {
		if _, err := r.repo.Reference(branch, false); err == nil && (branch.IsBranch() || branch.IsRemote()) {
			return true
		}
	}
	return false
}

func (r *Repo) resolve(ref string) (*object.Commit, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		return nil, err
	}
	return r.repo.CommitObject(*h)
}

func (r *Repo) want(h plumbing.Hash) {
	if !slices.Contains(r.wanted, h) {
		r.wanted = append(r.wanted, h)
	}
}

// commitHint says how to make a missing commit available where crdguard runs.
func (r *Repo) commitHint(sha string) string {
	if r.InActions {
		return "check out with full history (actions/checkout: fetch-depth: 0)"
	}
	return fmt.Sprintf("run `git fetch %s %s` and try again", r.Remote, sha)
}

// historyHint says how to make the history between two commits available.
func (r *Repo) historyHint() string {
	if r.InActions {
		return "check out with full history (actions/checkout: fetch-depth: 0)"
	}
	return fmt.Sprintf("run `git fetch --unshallow %s` and try again", r.Remote)
}

// fetch brings commits (and, within depth, their history, trees and blobs) from the remote into
// the temporary store. The remote's URL comes from the repository's configuration.
func (r *Repo) fetch(commits []plumbing.Hash, depth int) error {
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("reading the repository's configuration: %w", err)
	}
	rc, ok := cfg.Remotes[r.Remote]
	if !ok || len(rc.URLs) == 0 {
		return fmt.Errorf("the repository has no remote %q", r.Remote)
	}
	extra, err := r.store.store()
	if err != nil {
		return err
	}
	var specs []config.RefSpec
	for _, h := range commits {
		specs = append(specs, config.RefSpec("+"+h.String()+":refs/crdguard/"+h.String()))
	}
	remote := git.NewRemote(extra, &config.RemoteConfig{Name: r.Remote, URLs: rc.URLs})
	get := func(specs []config.RefSpec, depth int) error {
		err := remote.FetchContext(context.Background(), &git.FetchOptions{
			RemoteName: r.Remote, RefSpecs: specs, Depth: depth, Tags: git.NoTags, Auth: r.auth(),
		})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	}
	if err := get(specs, depth); err != nil {
		if r.PullRequest == 0 {
			return err
		}
		if perr := r.fetchPull(get, commits, depth); perr != nil {
			return fmt.Errorf("by SHA: %v; as %s: %v", err, pullRef(r.PullRequest), perr)
		}
	}
	for _, h := range commits {
		if !slices.Contains(r.Fetched, h.String()) {
			r.Fetched = append(r.Fetched, h.String())
		}
	}
	return nil
}

// pullDepth is the least history fetched with a pull request's head ref: the commit wanted may
// be behind the ref's tip when the pull request moved on after the run's event.
const pullDepth = 50

func pullRef(n int) string { return fmt.Sprintf("refs/pull/%d/head", n) }

// fetchPull fetches the commits the remote serves by SHA one by one (a base commit), and the
// others (a fork's head) through the pull request's head ref; it checks that the ref brought them.
func (r *Repo) fetchPull(get func([]config.RefSpec, int) error, commits []plumbing.Hash, depth int) error {
	var refused []plumbing.Hash
	for _, h := range commits {
		if get([]config.RefSpec{config.RefSpec("+" + h.String() + ":refs/crdguard/" + h.String())}, depth) != nil {
			refused = append(refused, h)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	ref := pullRef(r.PullRequest)
	if err := get([]config.RefSpec{config.RefSpec("+" + ref + ":refs/crdguard/pull/" + strconv.Itoa(r.PullRequest))}, max(depth, pullDepth)); err != nil {
		return err
	}
	for _, h := range refused {
		if r.store.HasEncodedObject(h) != nil {
			return fmt.Errorf("it does not hold %s within %d commits of its tip (the pull request's head moved on, or the commit is not in it)", h, max(depth, pullDepth))
		}
	}
	return nil
}

// fetchWanted is called when an object is in neither store (a partial clone lacks most blobs):
// it fetches the wanted commits whole, once each.
func (r *Repo) fetchWanted() bool {
	var todo []plumbing.Hash
	for _, h := range r.wanted {
		if !r.complete[h] {
			todo = append(todo, h)
			r.complete[h] = true // one attempt each, even when it fails
		}
	}
	return len(todo) > 0 && r.fetch(todo, 1) == nil
}

func (r *Repo) auth() transport.AuthMethod {
	if r.Token == "" {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: r.Token}
}

// deepenSteps are the depths a shallow clone's history is fetched at, in turn, while the merge
// base is not found; the last one is the whole history.
var deepenSteps = []int{50, 500, 5000, math.MaxInt32}

// MergeBase returns the best common ancestor of base and head: what a pull request's diff is
// computed against. In a shallow clone the history is fetched deeper and deeper (into the
// temporary store) until it is found, the whole history last.
func (r *Repo) MergeBase(base, head *object.Commit) (*object.Commit, error) {
	if !r.isShallow() {
		bases, err := base.MergeBase(head)
		if err != nil {
			return nil, fmt.Errorf("merge base of %s and %s: %w", short(base), short(head), err)
		}
		if len(bases) == 0 {
			return nil, fmt.Errorf("commits %s and %s have no common ancestor", short(base), short(head))
		}
		sort.Slice(bases, func(i, j int) bool { return bases[i].Hash.String() < bases[j].Hash.String() })
		r.want(bases[0].Hash)
		return bases[0], nil
	}
	var ferr error
	for i := 0; ; i++ {
		mb, complete, err := r.shallowMergeBase(base.Hash, head.Hash)
		if err != nil {
			return nil, err
		}
		if mb != nil {
			r.want(mb.Hash)
			return mb, nil
		}
		if complete {
			return nil, fmt.Errorf("commits %s and %s have no common ancestor", short(base), short(head))
		}
		if i == len(deepenSteps) || ferr != nil {
			break
		}
		// Each depth is fetched into a new store rather than deepening the last one.
		if ferr = r.store.close(); ferr != nil {
			break
		}
		ferr = r.fetch([]plumbing.Hash{base.Hash, head.Hash}, deepenSteps[i])
		r.complete = map[plumbing.Hash]bool{base.Hash: true, head.Hash: true}
	}
	why := ""
	if ferr != nil {
		why = fmt.Sprintf(" (fetching from %s: %v)", r.Remote, ferr)
	}
	return nil, fmt.Errorf("no merge base of %s and %s: %w%s; %s", short(base), short(head), ErrNeedHistory, why, r.historyHint())
}

// shallowMergeBase finds the newest commit reachable from both base and head among the commits
// the stores have. go-git's MergeBase fails at the first missing parent, and a shallow history of
// a project with merges always has some; here a missing parent is a boundary, and complete says
// whether any was met. Newest first from base: the first common commit is the one the pull
// request branched from (commit dates would have to go backwards to mislead it).
func (r *Repo) shallowMergeBase(base, head plumbing.Hash) (mb *object.Commit, complete bool, err error) {
	complete = true
	get := func(h plumbing.Hash) (*object.Commit, error) {
		c, err := r.repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			complete = false
			return nil, nil
		}
		return c, err
	}
	fromHead := map[plumbing.Hash]bool{}
	for stack := []plumbing.Hash{head}; len(stack) > 0; {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if fromHead[h] {
			continue
		}
		c, err := get(h)
		if err != nil {
			return nil, false, fmt.Errorf("reading commit %s: %w", h, err)
		}
		if c == nil {
			continue
		}
		fromHead[h] = true
		stack = append(stack, c.ParentHashes...)
	}
	seen := map[plumbing.Hash]bool{}
	var queue []*object.Commit // newest last
	push := func(h plumbing.Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		c, err := get(h)
		if err != nil || c == nil {
			return err
		}
		i := sort.Search(len(queue), func(i int) bool { return queue[i].Committer.When.After(c.Committer.When) })
		queue = slices.Insert(queue, i, c)
		return nil
	}
	if err := push(base); err != nil {
		return nil, false, fmt.Errorf("reading commit %s: %w", base, err)
	}
	for len(queue) > 0 {
		c := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if fromHead[c.Hash] {
			return c, complete, nil
		}
		for _, p := range c.ParentHashes {
			if err := push(p); err != nil {
				return nil, false, fmt.Errorf("reading commit %s: %w", p, err)
			}
		}
	}
	return nil, complete, nil
}

func (r *Repo) isShallow() bool {
	s, err := r.repo.Storer.Shallow()
	return err == nil && len(s) > 0
}

func short(c *object.Commit) string { return c.Hash.String()[:12] }

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
		}
		if to != "" && diffed(to) {
			c.to = to
			c.new, c.newErr = r.readBlob(to, ch.To.TreeEntry)
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
			if c.from != c.to || !bytes.Equal(c.old, c.new) { // an edit undone in the working tree
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
	cmp := &Comparison{
		Old:  &Tree{HasFile: gitHasFile(readOld), ChartFiles: gitChartFiles(oldTree, readOld)},
		New:  &Tree{HasFile: gitHasFile(readNew), ChartFiles: gitChartFiles(newTree, readNew)},
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
	for _, c := range files {
		if c.from != "" && f.Allows(c.from) {
			adds = append(adds, File{Tree: cmp.Old, Name: c.from, Data: c.old, Unreadable: blobProblem(c.oldErr)})
		}
		if c.to != "" && f.Allows(c.to) {
			adds = append(adds, File{Tree: cmp.New, Name: c.to, Data: c.new, Unreadable: blobProblem(c.newErr)})
			cmp.New.Changed[c.to] = true
		}
		cmp.Diff.Add(LazyFileDiff(c.from, c.to, c.old, c.new)) // samples carry findings too
	}
	AddFiles(append(adds, r.unlisted(cmp, files, newTree, changed, f)...))
	if err := r.addUnchanged(cmp, newTree, changed, f); err != nil {
		return nil, err
	}
	cmp.Old.ApplyPatches(r.reader(oldTree, nil))
	cmp.New.ApplyPatches(r.reader(newTree, working))
	return cmp, nil
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
func (r *Repo) addUnchanged(cmp *Comparison, tree *object.Tree, changed map[string]bool, f Filter) error {
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
	err := eachFile(tree, func(name string, entry object.TreeEntry) error {
		if entry.Mode == filemode.Symlink || changed[name] || !f.Allows(name) {
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
			return nil
		}
		one := &Tree{}
		one.AddFile(name, data, false)
		for _, c := range one.CRDs {
			if names[c.Name] {
				unchanged = append(unchanged, c)
			}
		}
		return nil
	})
	if err != nil {
		return err
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
