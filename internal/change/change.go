// Package change finds the findings that are one change at several places (DESIGN §6): a Go
// type embedded at many paths, a schema repeated in every served version, a CRD copied into a
// bundle. It runs after the policy and before any report: Assign gives each finding its
// change's stable ID, and Groups hands the reports one group per change.
package change

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Assign sets each finding's Change to the ID of the change it belongs to, unless it has one:
// the policy gives IDs before warn mode lowers severities, so that an ID an ignore entry names
// is the same in every mode.
func Assign(fs []finding.Finding) {
	for i := range fs {
		if fs[i].Change == "" {
			fs[i].Change = ID(&fs[i])
		}
	}
}

// ID is a short hash of what makes two findings the same change: the rule, the CRD, the
// severity, the baseline, the values before and after, and the path's shape (its last property
// name: a type embedded at many paths ends in the same field). For a field of an embedded
// built-in Kubernetes type, the type and field stand for the CRD and the shape; for findings
// with a cause (finding.Cause), the cause stands for the shape and the value after. Versions, files and the rest of
// the path are places, not part of it; so is the message, which names the path and carries a
// witness object built for that path. Version- and CRD-level findings (no path) are about their
// version, so it enters the ID; so does the object of a finding about an object. The ID depends
// only on the finding, so it is the same across runs and orderings.
func ID(f *finding.Finding) string {
	h := sha256.New()
	version := ""
	if f.Path == "" {
		version = f.Version
	}
	// A finding about an object (a sample, a stored object) is about that object and the error
	// the server gave for it: never the same change as another object's.
	object := f.Object
	if f.Stored != nil {
		object = f.Stored.APIVersion + " " + f.Stored.String()
	}
	if object != "" {
		object += "\x00" + f.Subject + "\x00" + f.Location.File
	}
	if f.CRD == "" {
		// A problem of a file whose CRDs are unknown (it does not parse, or cannot be read) is
		// that file's, on that side.
		object += "\x00" + f.Location.File + "\x00" + string(f.Location.Side) + "\x00" + f.Message
	}
	crd, shape, after := f.CRD, Shape(f.Path), compact(f.After)
	switch {
	case f.Cause != "":
		// Findings with one cause in a CRD (its v1beta1 schema typed for v1) are one change
		// of that CRD, whatever the path and the type each node got.
		shape, after = "cause "+f.Cause, ""
	case f.Builtin != "" && object == "":
		// A change an embedded built-in type brings is one change wherever the type is
		// embedded: in every CRD, at every path (DESIGN §7).
		crd, shape = "", "builtin "+f.Builtin
	}
	for _, part := range []string{f.Rule, crd, f.Severity.String(), f.Baseline, version, shape,
		compact(f.Before), after, object} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// compact writes a JSON value without insignificant space, so that formatting never splits a change.
func compact(raw json.RawMessage) string {
	if raw == nil {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Segments splits a path into its steps, each with its leading delimiter, so that joining them
// gives the path back: .spec.ports[*].name → .spec .ports [*] .name; .spec["a.b"].* →
// .spec ["a.b"] .*. The root "." is one step.
func Segments(path string) []string {
	var out []string
	for i := 0; i < len(path); {
		j := i + 1
		if path[i] == '[' {
			j = closing(path, i)
		} else {
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
		}
		out = append(out, path[i:j])
		i = j
	}
	return out
}

// closing returns the index after the ] that closes the [ at i, skipping a quoted name.
func closing(path string, i int) int {
	j := i + 1
	if j < len(path) && path[j] == '"' {
		for j++; j < len(path) && path[j] != '"'; j++ {
			if path[j] == '\\' {
				j++
			}
		}
	}
	for j < len(path) && path[j] != ']' {
		j++
	}
	return min(j+1, len(path))
}

// Shape is the path's last property name with the item and value steps after it: .name for
// .spec.containers[*].env[*].name, .labels.* for .spec.labels.*.
func Shape(path string) string {
	segs := Segments(path)
	i := len(segs) - 1
	for i > 0 && (segs[i] == "[*]" || segs[i] == ".*") {
		i--
	}
	if i < 0 {
		return ""
	}
	return strings.Join(segs[i:], "")
}
