package source

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
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
	// blobReads, when set (a test), counts the blobs read by path.
	blobReads map[string]int
	readsMu   sync.Mutex
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
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			// go-git says only "reference not found": a shallow or single-branch clone (what
			// actions/checkout makes by default) has no other branch, tag or history.
			return nil, fmt.Errorf("resolving %q: the clone has no such branch, tag or commit (a shallow or single-branch clone has only what it checked out); %s", ref, r.refHint(ref))
		}
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

// refHint says how to make a branch or tag the clone lacks available: the remote's branch
// origin/main is fetched as `git fetch origin main`.
func (r *Repo) refHint(ref string) string {
	if r.InActions {
		return "check out with full history (actions/checkout: fetch-depth: 0)"
	}
	name := ref
	if rest, ok := strings.CutPrefix(ref, r.Remote+"/"); ok {
		name = rest
	}
	return fmt.Sprintf("run `git fetch %s %s` (or clone with the whole history) and try again", r.Remote, name)
}

// historyHint says how to make the history between two commits available.
func (r *Repo) historyHint() string {
	if r.InActions {
		return "check out with full history (actions/checkout: fetch-depth: 0)"
	}
	return fmt.Sprintf("run `git fetch --unshallow %s` and try again", r.Remote)
}

func short(c *object.Commit) string { return c.Hash.String()[:12] }
