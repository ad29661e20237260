package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/version"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// additions are the safe changes a changelog lists as added: fields, versions, printer columns,
// enum values and the like. The other safe changes are loosenings, except descriptions.
var additions = map[string]bool{
	"crd-added": true, "names-added": true, "version-added": true, "field-added": true, "enum-value-added": true,
	"printer-columns-changed": true, "selectable-field-added": true, "subresource-added": true, "conversion-webhook-added": true,
	"preserve-unknown-fields-added": true, "int-or-string-added": true, "additional-properties-added": true,
}

// notInChangelog are changes release notes leave out: they change no behaviour.
var notInChangelog = map[string]bool{"description-changed": true, "validation-message-changed": true}

// section is one heading of a version's notes, in the order they are written.
type section int

const (
	breaking section = iota
	acknowledged
	toReview
	deprecations
	added
	loosened
	sections
)

var sectionTitles = [sections]string{"Breaking changes", "Acknowledged breaking changes", "Changes to review", "Deprecations", "Additions", "Loosenings"}

// entry is one change in a changelog, with the reasons it was acknowledged.
type entry struct {
	g       change.Group
	reasons []string
}

// Changelog writes Markdown release notes: per CRD, and within it per set of versions a change
// is in, the breaking changes first, then those acknowledged (with the reasons of the ignore
// entries, or the pull request's label), changes to review, deprecations, additions and
// loosenings, each change once with its places counted. Text from the CRDs is escaped.
func Changelog(w io.Writer, r Report) error {
	var b strings.Builder
	b.WriteString("# CRD changes\n\n")
	if r.Compared != nil {
		fmt.Fprintf(&b, "%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	// The findings ignore entries dropped are changes of their own (a change ignored in one
	// version stays breaking in the others), with the entries' reasons.
	fs := append([]finding.Finding{}, r.Findings...)
	reasons := map[string][]string{}
	for _, a := range r.Acknowledged {
		f := a.Finding
		f.Change = change.ID(&f) + "-acknowledged"
		if !slices.Contains(reasons[f.Change], a.Reason) {
			reasons[f.Change] = append(reasons[f.Change], a.Reason)
		}
		fs = append(fs, f)
	}
	set := byCRD(fs, finding.Info)
	if len(set.All) == 0 {
		b.WriteString("No changes to the CRDs.\n")
	}
	v := r.verdict()
	crds := set.CRDs
	if len(set.Shared) > 0 { // a change an embedded type brings to several CRDs is noted once
		crds = append(crds, crdChanges{Groups: set.Shared, several: true})
	}
	for _, c := range crds {
		notes := map[string]*[sections][]entry{}
		for _, g := range c.Groups {
			f := g.First()
			if notInChangelog[f.Rule] || reasons[g.ID] != nil && f.Severity == finding.Info {
				continue
			}
			sec := sectionOf(f, reasons[g.ID] != nil)
			key := strings.Join(g.Versions(), ", ")
			if notes[key] == nil {
				notes[key] = &[sections][]entry{}
			}
			notes[key][sec] = append(notes[key][sec], entry{g: g, reasons: reasons[g.ID]})
		}
		if len(notes) == 0 {
			continue
		}
		if c.several {
			b.WriteString("## In several CRDs\n")
		} else {
			fmt.Fprintf(&b, "## %s\n", orDash(Escape(c.CRD), "(unnamed document)"))
		}
		keys := make([]string, 0, len(notes))
		for k := range notes {
			keys = append(keys, k)
		}
		// The CRD-wide changes (no version) first, then changes in more versions, then the
		// newest versions, as Kubernetes orders them (v1, v1beta2, v1beta1, v1alpha1).
		slices.SortFunc(keys, func(a, b string) int {
			if a == "" || b == "" {
				return strings.Compare(a, b)
			}
			if na, nb := strings.Count(a, ","), strings.Count(b, ","); na != nb {
				return nb - na
			}
			fa, _, _ := strings.Cut(a, ", ")
			fb, _, _ := strings.Cut(b, ", ")
			if c := version.CompareKubeAwareVersionStrings(fa, fb); c != 0 {
				return -c
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			if k == "" {
				k = "All versions"
			}
			fmt.Fprintf(&b, "\n### %s\n", Escape(k))
			for sec, es := range notes[orEmpty(k)] {
				if len(es) == 0 {
					continue
				}
				title := sectionTitles[sec]
				if section(sec) == breaking && v.Acknowledged {
					title += " (acknowledged with the label " + Escape(v.Label) + ")"
				}
				fmt.Fprintf(&b, "\n#### %s\n\n", title)
				for _, e := range es {
					b.WriteString(changelogItem(&e))
				}
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func orEmpty(k string) string {
	if k == "All versions" {
		return ""
	}
	return k
}

// sectionOf picks where a change goes.
func sectionOf(f *finding.Finding, acked bool) section {
	switch {
	case acked:
		return acknowledged
	case f.Severity == finding.Error:
		return breaking
	case f.Severity == finding.Warning:
		return toReview
	case f.Rule == "deprecation-changed" && string(f.After) == "true":
		return deprecations
	case additions[f.Rule]:
		return added
	}
	return loosened
}

// changelogItem is one list item: what changed (the message without the advice and the
// witness; a CEL rule by its message, a sample by its object, field and reason), the rule, and
// where else the change is.
func changelogItem(e *entry) string {
	f := e.g.First()
	s := fmt.Sprintf("- %s (`%s`", changelogWhat(f), f.Rule)
	if where := e.g.Where(); where != "" {
		s += "; at " + words(where)
	}
	s += ")"
	if len(e.reasons) > 0 {
		quoted := make([]string, len(e.reasons))
		for i, r := range e.reasons {
			quoted[i] = "“" + Escape(r) + "”"
		}
		s += ": " + strings.Join(quoted, "; ")
	}
	return s + "\n"
}

// changelogWhat says what a change is, for release notes. A CEL rule goes by its message (or
// the text of its messageExpression), which is how its users know it, rather than by an
// expression that may run to hundreds of characters; a sample by its object, file, field and
// the API server's reason. Paths are code spans, whatever they hold.
func changelogWhat(f *finding.Finding) string {
	if f.Object != "" {
		return sampleWhat(f)
	}
	w := what(f.Message)
	before, after, ok := ruleNamed(f, w)
	if !ok {
		return prose(w, f.Path)
	}
	name := "“" + Escape(f.RuleMessage) + "”"
	if f.RuleMessage == "" {
		name = byExpression(before) + CodeSpan(f.RuleMessageExpression)
	}
	return prose(before, f.Path) + name + prose(after, f.Path)
}

// byExpression introduces a rule named by its messageExpression: "has a new validation rule
// with the message `…`", but "changed from "…" to a rule with the message `…`".
func byExpression(before string) string {
	if strings.HasSuffix(before, "rule ") {
		return "with the message "
	}
	return "a rule with the message "
}

// ruleNamed splits what a CEL rule's finding says (w) around the rule's quoted expression, which
// the reports people read name by the rule's message or messageExpression instead; ok is false
// when the rule has neither, or w does not quote it. A changed rule (its old expression in
// Before) has a name only when both sides share it (the rules see to that), and is named once:
// "validation rule “…” of .spec changed", never the old expression beside the new message.
func ruleNamed(f *finding.Finding, w string) (before, after string, ok bool) {
	if f.Subject == "" || f.RuleMessage == "" && f.RuleMessageExpression == "" {
		return "", "", false
	}
	q := strconv.Quote(f.Subject)
	if old, changed := oldRule(f); changed {
		fromTo := " from " + strconv.Quote(old) + " to " + q
		i := strings.Index(w, fromTo)
		j := strings.Index(w, ruleWord)
		if i < 0 || j < 0 || j > i {
			return "", "", false // not the rules' wording (cut): both expressions, as written
		}
		j += len(ruleWord)
		return w[:j], " " + w[j:i] + w[i+len(fromTo):], true
	}
	i := strings.LastIndex(w, q)
	if i < 0 {
		return "", "", false
	}
	return w[:i], w[i+len(q):], true
}

// ruleWord starts what a changed rule's finding says ("validation rule of .spec changed from …").
const ruleWord = "validation rule "

// oldRule is the old expression of a changed CEL rule's finding: its Before, when that is a
// string other than the new expression.
func oldRule(f *finding.Finding) (string, bool) {
	var old string
	if json.Unmarshal(f.Before, &old) != nil || old == "" || old == f.Subject {
		return "", false
	}
	return old, true
}

// sampleWhat is a sample finding in release notes: which object in which file, which field, and
// why the API server refuses (or prunes) it — without the advice meant for the review.
func sampleWhat(f *finding.Finding) string {
	msg := f.Message
	if r, ok := rules.Lookup(f.Rule); ok && r.Advice != "" {
		msg = strings.TrimSuffix(msg, ": "+r.Advice)
	}
	if i := strings.Index(msg, rules.SampleStoredNote); i >= 0 {
		msg = msg[:i]
	}
	// The message starts with the object, Kind "name", which the entry names by itself.
	parts := strings.Split(f.Object, "/") // Kind/name or Kind/namespace/name
	msg = strings.TrimPrefix(msg, parts[0]+" "+strconv.Quote(parts[len(parts)-1]))
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, ":"), " ")
	if field := strings.TrimPrefix(f.Path, "."); field != "" {
		msg = strings.TrimPrefix(msg, field+": ")
	}
	s := "sample " + CodeSpan(f.Object) + " in " + CodeSpan(fmt.Sprintf("%s:%d", f.Location.File, f.Location.Line))
	if f.Path != "" && f.Path != "." {
		s += ", field " + CodeSpan(f.Path)
	}
	return s + ": " + Escape(msg)
}

// what is the part of a message that says what changed: messages go on, after a colon, with a
// witness, why it breaks and what to do, which release notes leave to the review. The colon is
// the first outside quotes and parentheses (a CEL rule or a path may hold one).
func what(msg string) string {
	msg = withoutProver(msg)
	if i := unquoted(msg, 0, func(i, depth int) bool { return depth == 0 && strings.HasPrefix(msg[i:], ": ") }); i >= 0 {
		return msg[:i]
	}
	return msg
}

// prose writes a message for release notes: the paths given (which may hold quotes, backticks
// or spaces), quoted text (a CEL rule, a value) and other paths as code spans, which GitHub
// shows as they are and never turns into links, mentions or HTML, and the rest escaped.
func prose(msg string, paths ...string) string {
	for _, p := range paths {
		if i := pathIndex(msg, p); p != "" && i >= 0 {
			return prose(msg[:i], paths...) + CodeSpan(p) + prose(msg[i+len(p):], paths...)
		}
	}
	var b strings.Builder
	for msg != "" {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(words(msg))
			break
		}
		b.WriteString(words(msg[:i]))
		end := i + 1
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(msg) { // no closing quote: the rest is plain text
			b.WriteString(Escape(msg[i:]))
			break
		}
		quoted := msg[i+1 : end]
		if u, err := strconv.Unquote(msg[i : end+1]); err == nil { // messages quote with %q
			quoted = u
		}
		if quoted == "" {
			quoted = `""` // the empty string, which an empty code span would not show
		}
		b.WriteString(CodeSpan(quoted))
		msg = msg[end+1:]
	}
	return b.String()
}

// pathIndex is where p stands in msg as a whole path, not as the start of a longer one (.spec
// in ".spec.sts is new"), or -1.
func pathIndex(msg, p string) int {
	for from := 0; p != ""; {
		i := strings.Index(msg[from:], p)
		if i < 0 {
			return -1
		}
		end := from + i + len(p)
		if end == len(msg) || !strings.ContainsRune(".[*_-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", rune(msg[end])) {
			return from + i
		}
		from = from + i + 1
	}
	return -1
}

// words escapes text, writing the words that are paths (.spec.x[*]) as code spans.
func words(s string) string {
	parts := strings.Split(s, " ")
	for i, w := range parts {
		core := strings.TrimRight(w, ",;:)")
		if len(core) > 1 && core[0] == '.' && core[1] != '.' && core[1] != ' ' {
			parts[i] = CodeSpan(core) + Escape(w[len(core):])
		} else {
			parts[i] = Escape(w)
		}
	}
	return strings.Join(parts, " ")
}

// CodeSpan writes s as inline code: delimited by more backticks than any run inside it, and
// padded when it starts or ends with one; line breaks and other control characters become spaces.
func CodeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// undecided opens what the prover says of a change it left undecided: its reasoning ("… no
// proof applies, and .spec.b takes more values than can be tried"), which the full message
// keeps and release notes and one-line summaries leave out: the change is an error either way.
const undecided = " (undecided: "

// withoutProver is msg without its parenthesised undecided reasoning (outside quoted text).
func withoutProver(msg string) string {
	i := unquoted(msg, 0, func(i, _ int) bool { return strings.HasPrefix(msg[i:], undecided) })
	if i < 0 {
		return msg
	}
	// The ')' that closes the reasoning's '(' (one byte in).
	if end := unquoted(msg, i+1, func(j, depth int) bool { return depth == 0 && msg[j] == ')' }); end > 0 {
		return msg[:i] + withoutProver(msg[end+1:])
	}
	return msg[:i]
}

// unquoted scans msg from start, skipping quoted text ("…", escapes included), and returns the
// first index at which stop holds, given the parentheses open there (counted from start, a ')'
// already closed); -1 when none does. what, withoutProver and its closing parenthesis all read
// messages this way: a CEL rule or value quoted in a message may hold any of ':', '(' and ')'.
func unquoted(msg string, start int, stop func(i, depth int) bool) int {
	depth, quoted := 0, false
	for i := start; i < len(msg); i++ {
		switch c := msg[i]; {
		case c == '\\' && quoted:
			i++
			continue
		case c == '"':
			quoted = !quoted
			continue
		case quoted:
			continue
		case c == '(':
			depth++
		case c == ')':
			depth = max(0, depth-1)
		}
		if stop(i, depth) {
			return i
		}
	}
	return -1
}
