// Package gittest builds real git repositories with go-git for tests.
package gittest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is a repository in a temporary folder with a working tree.
type Repo struct {
	t   testing.TB
	Dir string
	Git *git.Repository
	wt  *git.Worktree
	now time.Time
}

// New initialises an empty repository.
func New(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, Dir: dir, Git: r, wt: wt, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Write writes a file of the working tree, creating folders.
func (r *Repo) Write(path string, data []byte) {
	r.t.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Copy writes the content of the file src to path.
func (r *Repo) Copy(path, src string) {
	r.t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		r.t.Fatal(err)
	}
	r.Write(path, data)
}

// Remove deletes a file of the working tree.
func (r *Repo) Remove(path string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.Dir, path)); err != nil {
		r.t.Fatal(err)
	}
}

// Commit stages everything and commits it; each commit is a minute after the previous one, so
// history order is deterministic.
func (r *Repo) Commit(msg string) plumbing.Hash {
	r.t.Helper()
	if err := r.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	r.now = r.now.Add(time.Minute)
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: r.now}
	h, err := r.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// Ref points a reference (branch, tag) at a commit.
func (r *Repo) Ref(name plumbing.ReferenceName, h plumbing.Hash) {
	r.t.Helper()
	if err := r.Git.Storer.SetReference(plumbing.NewHashReference(name, h)); err != nil {
		r.t.Fatal(err)
	}
}

// Branch points a branch at a commit.
func (r *Repo) Branch(name string, h plumbing.Hash) { r.Ref(plumbing.NewBranchReferenceName(name), h) }

// Tag points a lightweight tag at a commit.
func (r *Repo) Tag(name string, h plumbing.Hash) { r.Ref(plumbing.NewTagReferenceName(name), h) }

// Checkout moves the working tree to a commit.
func (r *Repo) Checkout(h plumbing.Hash) {
	r.t.Helper()
	if err := r.wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		r.t.Fatal(err)
	}
}

// Symlink makes path a symbolic link to target (a path relative to the link's folder, as git
// stores it), creating folders.
func (r *Repo) Symlink(path, target string) {
	r.t.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		r.t.Fatal(err)
	}
}
