package gotypes

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// CRD is what the mapping needs to know of a CRD besides its name: the API group and kind
// that name its Go package and type.
type CRD struct{ Group, Kind string }

// Stats counts what Map did: of the findings about a CRD version (Eligible), how many got a Go
// line (Mapped), and how many of those stopped at another module's type (Partial).
type Stats struct{ Eligible, Mapped, Partial int }

// versionMarkers are the markers on a kind's type that set version-level fields, by rule.
var versionMarkers = map[string][]string{
	"subresource-added":        {"kubebuilder:subresource:status", "kubebuilder:subresource:scale"},
	"subresource-removed":      {"kubebuilder:subresource:status", "kubebuilder:subresource:scale"},
	"storage-version-changed":  {"kubebuilder:storageversion"},
	"served-version-removed":   {"kubebuilder:unservedversion"},
	"deprecation-changed":      {"kubebuilder:deprecatedversion"},
	"printer-columns-changed":  {"kubebuilder:printcolumn"},
	"selectable-field-added":   {"kubebuilder:selectablefield"},
	"selectable-field-removed": {"kubebuilder:selectablefield"},
}

// Map sets Source on the findings whose schema node is generated from Go types of the
// repository: base for what a finding places on the base side (a removed field), head for the
// rest. crds gives each CRD name's group and kind. Either side may be nil (no Go sources on
// that side); each is indexed once, shared with the rules' questions (Types.Builtin). Findings about samples, whole CRDs and baselines' base side are left alone.
func Map(fs []finding.Finding, crds map[string]CRD, base, head *Types) Stats {
	var st Stats
	idx := map[finding.Side]*index{}
	sides := map[finding.Side]*Types{finding.Base: base, finding.Head: head}
	for i := range fs {
		f := &fs[i]
		c, ok := crds[f.CRD]
		side := f.Location.Side
		if !ok || f.Version == "" || strings.HasPrefix(f.Rule, "sample-") || f.Baseline != "" && side == finding.Base {
			continue
		}
		st.Eligible++
		if _, ok := idx[side]; !ok {
			idx[side] = sides[side].index()
		}
		if idx[side] == nil {
			continue
		}
		root := idx[side].root(c.Group, f.Version, c.Kind)
		if root == nil {
			continue
		}
		loc, complete, ok := locate(root, f)
		if !ok {
			continue
		}
		loc.Side = side
		f.Source = &loc
		st.Mapped++
		if !complete {
			st.Partial++
		}
	}
	return st
}

// locate finds the Go line of one finding under its kind's root type: the marker that sets the
// changed keyword, else the declaration of the field (or type) that generates the node.
// complete is false when the walk stopped at another module's type.
func locate(root *decl, f *finding.Finding) (finding.Location, bool, bool) {
	if f.Path == "" {
		if m, ok := find(root.markers, versionMarkers[f.Rule]...); ok {
			if strings.Contains(f.Message, "scale") {
				if s, ok := find(root.markers, "kubebuilder:subresource:scale"); ok {
					m = s
				}
			}
			return finding.Location{File: m.file, Line: m.line}, true, true
		}
		return finding.Location{File: root.file.name, Line: root.line}, true, true
	}
	segs, ok := splitPath(f.Path)
	if !ok {
		return finding.Location{}, false, false
	}
	n, end := walk(root, segs)
	if end == lost {
		return finding.Location{}, false, false
	}
	if end == whole {
		if kw := keywordOf(f.Rule, f.Message); kw != "" {
			if m, ok := pick(n.markers, kw, f.Subject); ok {
				return finding.Location{File: m.file, Line: m.line}, true, true
			}
		}
	}
	return finding.Location{File: n.file, Line: n.line}, end == whole, true
}
