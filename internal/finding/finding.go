// Package finding holds the result type that flows from the rules through the policy to the
// reports: one classified difference between two CRDs, with where it is.
package finding

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// Severity is how much a finding matters; the zero value is Info.
type Severity int

// The severities, least to most serious.
const (
	Info Severity = iota
	Warning
	Error
)

var severityNames = [...]string{Info: "info", Warning: "warning", Error: "error"}

// String returns the lower-case name used in JSON, config and output.
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads "error", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	for i, n := range severityNames {
		if n == s {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (allowed: error, warning, info)", s)
}

// MarshalJSON writes the severity's name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a severity's name.
func (s *Severity) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	v, err := ParseSeverity(name)
	*s = v
	return err
}

// Side says which commit or file a location is in: Head for what a change adds or keeps, Base
// for what it removes (so a review comment can land on the removed line).
type Side string

// The two sides of a comparison.
const (
	Head Side = "head"
	Base Side = "base"
)

// Location is the line of the YAML key that carries a change.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Side Side   `json:"side"`
}

// HeadLine is a line of the head commit a finding is shown at. For a finding about lines the
// change removed (side base) it is the kept line where the removed lines were, and Removed is
// set: the finding's own Location still names the removed line.
type HeadLine struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Removed bool   `json:"removed,omitempty"`
	// EndColumn is the column after the line's last character, in UTF-16 code units as SARIF
	// counts them; 0 when the line's text was not at hand.
	EndColumn int `json:"-"`
}

// Shown is where a finding is shown on head: its Head when placed, else its own location when
// that is on head (line 1 for a finding without a line); false when it has no head line.
func (f *Finding) Shown() (HeadLine, bool) {
	switch {
	case f.Head != nil:
		return *f.Head, true
	case f.Location.Side != Base && f.Location.File != "":
		return HeadLine{File: f.Location.File, Line: max(f.Location.Line, 1)}, true
	}
	return HeadLine{}, false
}

// Finding is one classified difference. Paths are JSONPath-like from the object root (see
// DESIGN §2); CRD-level findings have an empty version and path.
type Finding struct {
	Rule     string          `json:"rule"`
	Severity Severity        `json:"severity"`
	CRD      string          `json:"crd"`
	Version  string          `json:"version"`
	Path     string          `json:"path"`
	Message  string          `json:"message"`
	Before   json.RawMessage `json:"before"`
	After    json.RawMessage `json:"after"`
	Location Location        `json:"location"`
	// Baseline names the ref the old side came from when it is not the PR's base.
	Baseline string `json:"baseline,omitempty"`
	// Example is an object the base schema accepts and the head schema rejects, as the API
	// server's validator decides (DESIGN §2): how a tightening is shown rather than asserted.
	Example json.RawMessage `json:"example,omitempty"`
	// ExampleUpdate is the witness of a transition rule (DESIGN §6): an update from a stored
	// object that the base schema allowed and the head schema refuses.
	ExampleUpdate *Update `json:"exampleUpdate,omitempty"`
	// Locations are every copy of the CRD that this finding applies to, Location among them,
	// when byte-identical copies were compared once (DESIGN §3); empty for a single copy.
	Locations []Location `json:"locations,omitempty"`
	// Source is the Go line that generated the finding's schema node in a controller-gen
	// project (DESIGN §6): the marker that sets the changed keyword, else the field's (or the
	// kind's) declaration; on the base side for what the change removes.
	Source *Location `json:"source,omitempty"`
	// RenamedTo is, on a removed property, the property its object gained beside it with the
	// same type and shape: most likely its new name. The removal and the addition are one
	// change, so one finding, at the removed line, names both.
	RenamedTo *Renamed `json:"renamedTo,omitempty"`
	// Object names the sample a sample finding is about (kind/name, kind/namespace/name when
	// the sample sets a namespace): one file can hold several samples with the same problem.
	Object string `json:"object,omitempty"`
	// Builtin names the field of a built-in Kubernetes type the finding's node is, when the
	// schema embeds one (DESIGN §7): Container.env, Container.ports[*].protocol.
	Builtin string `json:"builtin,omitempty"`
	// Cause names the one reason several findings of a CRD share (CauseV1Typed): package
	// change makes them one change, whatever their paths and new values, each finding still a
	// place of its own. "" for a finding whose change is its own.
	Cause string `json:"-"`
	// Change is shared by the findings that are one change at several places (paths that embed
	// one type, versions, copies); package change sets it after the policy (DESIGN §6).
	Change string `json:"change,omitempty"`
	// Head is where the finding is shown on the head commit: every channel that can only point
	// at head (annotations, workflow commands, SARIF, rdjson) and the review comments on kept
	// lines use it, so they all agree. nil where no head line exists (a file deleted by the
	// change) or nothing placed the finding (diff mode).
	Head *HeadLine `json:"head,omitempty"`
	// Stored names the cluster object a stored-object finding is about; JSON writes it as
	// "object" (DESIGN §6), in place of the sample's string.
	Stored *ObjectRef `json:"-"`
	// RuleMessage and RuleMessageExpression are the message and messageExpression of the CEL
	// rule a finding is about, which people know the rule by (release notes name it so); on a
	// changed rule, only when both sides share them, so that a report names both sides alike.
	RuleMessage           string `json:"-"`
	RuleMessageExpression string `json:"-"`
	// Subject tells apart findings of one rule at one path: a sample's object and error, a CEL
	// rule's text (a node can gain two rules). It enters the key and fingerprints.
	Subject string `json:"-"`

	// Ratchetable is set by the rules when Kubernetes validation ratcheting rescues existing
	// objects from this change (a value tightening outside not/oneOf/anyOf/allOf and not a CEL
	// rule using oldSelf); the policy decides what to do with it.
	Ratchetable bool `json:"-"`
	// Unread marks an invalid-crd finding for an input crdguard could not read (YAML that does
	// not parse, a document that does not decode, a file past the limits): a reading failure,
	// not a judgement, which no rule setting, ratcheting or warn mode lowers or hides (policy).
	Unread bool `json:"-"`
	// Refused marks a finding whose change the API server refuses outright (the registry's
	// Rule.Refused: invalid-crd, scope-changed, stored-version-removed, size-storage-exceeded);
	// the policy sets it, and Importance puts such errors first.
	Refused bool `json:"-"`
}

// CauseV1Typed is the cause of the type-changed findings at every node a CRD's
// apiextensions.k8s.io/v1beta1 schema left untyped and its v1 schema types, as v1 requires of
// every node: one move, one change.
const CauseV1Typed = "v1beta1 schema typed for v1"

// Renamed is the property a removed one was probably renamed to, and its line on head.
type Renamed struct {
	Path     string   `json:"path"`
	Location Location `json:"location"`
}

// ObjectRef names an object stored in a cluster.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String is kind namespace/name (kind name for a cluster-scoped object).
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// MarshalJSON writes the finding, with a stored object under "object" when there is one.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding // without this method
	if f.Stored == nil {
		return json.Marshal(plain(f))
	}
	// The outer field is shallower than plain's Object, so encoding/json writes it instead.
	return json.Marshal(struct {
		plain
		Object *ObjectRef `json:"object"`
	}{plain(f), f.Stored})
}

// Value encodes v as JSON for Before and After; nil stays JSON null.
func Value(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// Sort orders findings by file, line, rule, path and message (DESIGN §3), then by every other
// field, so output is byte-for-byte the same for the same input: the API server reports some
// errors in map order (one per invalid label, all on the labels line), and two findings that
// differ only there must not swap between runs.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return Less(&fs[i], &fs[j]) })
}

// Less is the order Sort uses: a total order over every field a report shows.
func Less(a, b *Finding) bool {
	switch {
	case a.Location.File != b.Location.File:
		return a.Location.File < b.Location.File
	case a.Location.Line != b.Location.Line:
		return a.Location.Line < b.Location.Line
	case a.Rule != b.Rule:
		return a.Rule < b.Rule
	case a.Path != b.Path:
		return a.Path < b.Path
	case a.Message != b.Message:
		return a.Message < b.Message
	case a.CRD != b.CRD:
		return a.CRD < b.CRD
	case a.Version != b.Version:
		return a.Version < b.Version
	case a.Location.Side != b.Location.Side:
		return a.Location.Side < b.Location.Side
	case a.Baseline != b.Baseline:
		return a.Baseline < b.Baseline
	case a.Severity != b.Severity:
		return a.Severity > b.Severity
	}
	if c := bytes.Compare(a.Before, b.Before); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.After, b.After) < 0
}

// Importance compares two findings by how much they matter to whoever must act, most important
// first (negative when a comes first): errors, then warnings, then info, and among the errors
// those the API server refuses outright (Refused) before the rest. It is the one order of
// importance for every choice of what to show first (every report's order, what the Markdown
// and review keep when not everything fits); use it with a stable sort, so that equally
// important findings keep the caller's order.
func Importance(a, b *Finding) int {
	return rank(b) - rank(a)
}

// rank is a finding's place in Importance: 3 an error the API server refuses outright, 2 any
// other error, 1 a warning, 0 info.
func rank(f *Finding) int {
	if f.outright() {
		return int(Error) + 1
	}
	return int(f.Severity)
}

// outright is an error the API server refuses outright.
func (f *Finding) outright() bool { return f.Severity == Error && f.Refused }

// Order puts findings in the order every report starts from, once, after the policy: the
// errors the API server refuses outright first, then the rest, each in the order given (the
// checks' Sort order: file, line, rule, …). Reports that group (by CRD, by severity) keep it
// within each group and rank with Importance, so every channel lists an outright refusal before
// the other errors.
func Order(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].outright() && !fs[j].outright() })
}

// Key identifies a finding independently of its line, for deduplication and fingerprints.
func (f *Finding) Key() string {
	k := f.Rule + "\x00" + f.CRD + "\x00" + f.Version + "\x00" + f.Path
	if f.Subject != "" { // only then: earlier releases' fingerprints of other findings stay valid
		k += "\x00" + f.Subject
	}
	return k
}

// Fingerprint identifies a finding across runs (review comments, SARIF partialFingerprints):
// rule, CRD, version, path, subject and baseline, never the line, so a finding that moves is the same.
func (f *Finding) Fingerprint() string {
	sum := sha256.Sum256([]byte(f.Key() + "\x00" + f.Baseline))
	return hex.EncodeToString(sum[:8])
}

// SortLocations orders locations by file, line and side.
func SortLocations(ls []Location) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Side < b.Side
	})
}

// Update is an update of a stored object: Old as stored, New as written.
type Update struct {
	Old json.RawMessage `json:"old"`
	New json.RawMessage `json:"new"`
}

// MaxMessage bounds a finding's message, in bytes: past it the policy cuts the message (Cut), so
// that no report, annotation or comment carries a dump (a 61 KB Go struct once).
const MaxMessage = 2000

// Cut shortens s to at most n bytes, never inside a UTF-8 sequence, and marks the cut with "…":
// the one helper every bound on text uses (messages, quoted errors, GitHub's limits, the
// reports' columns).
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n-len("…"), 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
