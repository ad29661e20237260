package check

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/gotypes"
	"github.com/crdguard/crdguard/internal/source"
)

// goSources is the placement step for Go sources (DESIGN §6): each finding about a CRD that
// controller-gen generates from the repository's Go types gets the Go line that produced it,
// and the diff learns the hunks of those Go files, so a review comment can go there. head is
// the working tree's files when it was compared (its Go edits count), else the head commit's.
// base and head are the sources the rules were given (commitGo, headGo): read once for both.
func goSources(base, head *gotypes.Types, cmp *source.Comparison, res *GitResult) (gotypes.Stats, error) {
	crds := crdsOf(cmp.Old, cmp.New)
	if len(res.Findings) == 0 || len(crds) == 0 {
		return gotypes.Stats{}, nil
	}
	baseFiles, err := base.Sources()
	if err != nil {
		return gotypes.Stats{}, fmt.Errorf("go sources: %w", err)
	}
	headFiles, err := head.Sources()
	if err != nil {
		return gotypes.Stats{}, fmt.Errorf("go sources: %w", err)
	}
	st := gotypes.Map(res.Findings, crds, base, head)
	addGoHunks(res.Diff, res.Findings, baseFiles, headFiles)
	return st, nil
}

// commitGo is a commit's Go sources as a fact for the rules, read on first question.
func commitGo(repo *source.Repo, c *object.Commit) *gotypes.Types {
	return gotypes.NewTypes(func() (gotypes.Tree, error) { return repo.CommitFiles(c) })
}

// headGo is the head's Go sources: the working tree's files when it is compared (its Go edits
// count), else the head commit's; goSources places findings with the same files.
func headGo(repo *source.Repo, head *object.Commit, workingTree bool) *gotypes.Types {
	if root := repo.Root(); workingTree && root != "" {
		return dirGo(root)
	}
	return commitGo(repo, head)
}

// dirGo is a folder's Go sources as a fact for the rules, read on first question.
func dirGo(root string) *gotypes.Types {
	return gotypes.NewTypes(func() (gotypes.Tree, error) { return source.DirFiles(root) })
}

// DirGoTypes gives the rules what the Go sources of two directories compared by `crdguard
// diff` say of embedded types (a side that is no directory has none), and returns them for
// DirSources.
func DirGoTypes(old, new *source.Tree) (sides [2]*gotypes.Types) {
	for i, t := range []*source.Tree{old, new} {
		if t != nil && t.Root != "" {
			sides[i] = dirGo(t.Root)
			t.Go = sides[i]
		}
	}
	return sides
}

// crdsOf is the group and kind of every CRD of two trees, by name.
func crdsOf(trees ...*source.Tree) map[string]gotypes.CRD {
	crds := map[string]gotypes.CRD{}
	for _, t := range trees {
		for _, c := range t.CRDs {
			crds[c.Name] = gotypes.CRD{Group: c.Object.Spec.Group, Kind: c.Object.Spec.Names.Kind}
		}
	}
	return crds
}

// addGoHunks adds to the diff the Go files that findings point at and that the change edits
// in place (same path on both sides); a Go file added, removed or moved is left out, so no
// comment is placed from a pairing GitHub may show differently.
func addGoHunks(d *source.Diff, fs []finding.Finding, base, head gotypes.Tree) {
	if d == nil || base == nil || head == nil {
		return
	}
	done := map[string]bool{}
	for _, f := range fs {
		if f.Source == nil || done[f.Source.File] {
			continue
		}
		name := f.Source.File
		done[name] = true
		if _, known := d.File(name, true); known {
			continue
		}
		old, errOld := base.Read(name)
		new, errNew := head.Read(name)
		if errOld != nil || errNew != nil || bytes.Equal(old, new) {
			continue
		}
		d.Add(source.NewFileDiff(name, name, old, new))
	}
}

// DirSources is goSources for two directories compared by `crdguard diff` (a checkout of each
// release, say), with the sources DirGoTypes gave the rules: the Go lines are named as the CRDs
// are, joined to the directory given. A side that is not a directory (a file, a cluster) has no
// Go sources.
func DirSources(res *Result, old, new *source.Tree, sides [2]*gotypes.Types) {
	roots := map[finding.Side]string{finding.Base: old.Root, finding.Head: new.Root}
	for _, s := range sides {
		if _, err := s.Sources(); err != nil {
			res.Notices = append(res.Notices, err.Error()+"; findings point at the CRD YAML only")
			return
		}
	}
	if sides[0] == nil && sides[1] == nil {
		return
	}
	gotypes.Map(res.Findings, crdsOf(old, new), sides[0], sides[1])
	for i := range res.Findings {
		if src := res.Findings[i].Source; src != nil {
			src.File = filepath.ToSlash(filepath.Join(roots[src.Side], filepath.FromSlash(src.File)))
		}
	}
}
