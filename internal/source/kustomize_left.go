package source

import (
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
)

// A CRD can leave the repository without leaving the cluster: the kustomization that installed
// its file now lists a remote resource (github.com/org/repo//config/crd?ref=v1) and the file is
// gone, or a chart now takes it from a dependency fetched from a chart repository. crdguard
// fetches nothing, so it cannot compare the CRD there, but it must not call it removed either:
// source records which remote resources each installer reaches (remoteVia), and LeftTo tells
// check which ones a base CRD file's installers gained.

// setRemoteVia records the remote resources an installer of the tree (a kustomization's path
// under the root, or a chart folder's) installs, in the order met.
func (t *Tree) setRemoteVia(installer string, remotes []Remote) {
	if t.remoteVia == nil {
		t.remoteVia = map[string][]Remote{}
	}
	t.remoteVia[installer] = remotes
}

// LeftTo returns the remote resources through which the head installers of a base file (the
// kustomizations that listed it in base, directly or through folders, the chart it belonged to
// and that chart's top chart) now install what crdguard does not fetch: remote entries that installer did not list in
// base. A CRD of that file that head no longer holds anywhere has left the repository for one of
// them. The result is sorted by file and line, each remote once.
func LeftTo(old, new *Tree, file string) []Remote {
	installers := []string{}
	for k := range old.Listing(old.Rel(file)) {
		installers = append(installers, k)
	}
	if chart := old.Facts(file).Chart; chart != "" {
		installers = append(installers, old.Rel(chart))
	}
	// A sub-chart's CRD is installed by the release of its top chart, whose dependencies are
	// the ones fetched.
	if top, ok := old.ChartTemplate(file); ok && !slices.Contains(installers, old.Rel(top)) {
		installers = append(installers, old.Rel(top))
	}
	var out []Remote
	for _, k := range installers {
		for _, r := range Gained(old, new, k) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, CompareRemotes)
	return out
}

// Gained returns the remote resources an installer (a kustomization's path under the root, or a
// chart folder's) reaches in head and did not reach in base, in the order met.
func Gained(old, new *Tree, installer string) []Remote {
	var out []Remote
	for _, r := range new.remoteVia[installer] {
		if !slices.ContainsFunc(old.remoteVia[installer], func(b Remote) bool { return b.Entry == r.Entry }) {
			out = append(out, r)
		}
	}
	return out
}

// CompareRemotes orders remote resources by file and line.
func CompareRemotes(a, b Remote) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	return a.Line - b.Line
}

// Installs reports whether a kustomization the tree read (by its path under the root) installs
// a definition of the CRD name: one of the files it lists, directly or through folders, defines
// it. A CRD whose file was renamed and is listed under its new name is still installed.
func (t *Tree) Installs(kustomization, name string) bool {
	listed := t.listing[kustomization]
	return slices.ContainsFunc(t.CRDs, func(c *crd.CRD) bool {
		_, ok := listed[t.rel(c.File)]
		return ok && c.Name == name
	})
}
