package gotypes

import (
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// marker is one controller-gen marker comment (`// +kubebuilder:validation:Maximum=10`): its
// text after the plus and the line it is on.
type marker struct {
	text string
	file string
	line int
}

// is reports whether the marker is the named one: the name alone, or followed by = (a value)
// or : (arguments, as in XValidation:rule=…).
func (m marker) is(name string) bool {
	rest, ok := strings.CutPrefix(m.text, name)
	return ok && (rest == "" || rest[0] == '=' || rest[0] == ':')
}

// value returns the value of a name=value marker.
func (m marker) value(name string) (string, bool) {
	v, ok := strings.CutPrefix(m.text, name+"=")
	return strings.TrimSpace(v), ok
}

// markersOf reads the markers of a comment group, in order.
func markersOf(fset *token.FileSet, cg *ast.CommentGroup) []marker {
	if cg == nil {
		return nil
	}
	var out []marker
	for _, c := range cg.List {
		text, ok := strings.CutPrefix(c.Text, "//")
		if !ok {
			continue // controller-gen reads markers from line comments only
		}
		text = strings.TrimSpace(text)
		if v, ok := channelMarker(text); ok {
			text = "+" + v
		}
		if !strings.HasPrefix(text, "+") || len(text) < 2 {
			continue
		}
		pos := fset.Position(c.Pos())
		out = append(out, marker{text: text[1:], file: pos.Filename, line: pos.Line})
	}
	return out
}

// channelMarker reads Gateway API's per-channel validation markers
// (`<gateway:experimental:validation:XValidation:rule="…">`), which its own generator turns
// into the kubebuilder marker of the same name for one release channel's CRDs.
func channelMarker(text string) (string, bool) {
	if !strings.HasPrefix(text, "<gateway:") || !strings.HasSuffix(text, ">") {
		return "", false
	}
	_, rest, ok := strings.Cut(text[1:len(text)-1], ":validation:")
	return "kubebuilder:validation:" + rest, ok
}

// find returns the first marker with one of the names.
func find(ms []marker, names ...string) (marker, bool) {
	for _, m := range ms {
		for _, n := range names {
			if m.is(n) {
				return m, true
			}
		}
	}
	return marker{}, false
}

// groups are a file's comment groups in order, to find the one above a declaration's doc.
type groups []*ast.CommentGroup

func commentGroups(af *ast.File) groups { return af.Comments }

// before returns the comment group that ends on one of the two lines above pos (so at most one
// blank line between), other than the one starting at pos: controller-gen reads a type's
// markers from its doc comment and from the group just above it, which kubebuilder scaffolds
// with a blank line in between.
func (gs groups) before(fset *token.FileSet, pos token.Pos) *ast.CommentGroup {
	line := fset.Position(pos).Line
	i := sort.Search(len(gs), func(i int) bool { return gs[i].Pos() >= pos })
	if i == 0 {
		return nil
	}
	g := gs[i-1]
	if end := fset.Position(g.End()).Line; end < line && end >= line-2 {
		return g
	}
	return nil
}

// keywordMarkers names the markers that set each schema keyword, after the
// kubebuilder:validation: prefix where they have it (controller-tools' validation markers).
var keywordMarkers = map[string][]string{
	"maximum":          {"kubebuilder:validation:Maximum"},
	"minimum":          {"kubebuilder:validation:Minimum"},
	"exclusiveMaximum": {"kubebuilder:validation:ExclusiveMaximum"},
	"exclusiveMinimum": {"kubebuilder:validation:ExclusiveMinimum"},
	"multipleOf":       {"kubebuilder:validation:MultipleOf"},
	"maxLength":        {"kubebuilder:validation:MaxLength"},
	"minLength":        {"kubebuilder:validation:MinLength"},
	"maxItems":         {"kubebuilder:validation:MaxItems"},
	"minItems":         {"kubebuilder:validation:MinItems"},
	"maxProperties":    {"kubebuilder:validation:MaxProperties"},
	"minProperties":    {"kubebuilder:validation:MinProperties"},
	"uniqueItems":      {"kubebuilder:validation:UniqueItems"},
	"pattern":          {"kubebuilder:validation:Pattern"},
	"enum":             {"kubebuilder:validation:Enum"},
	"format":           {"kubebuilder:validation:Format"},
	"type":             {"kubebuilder:validation:Type", "kubebuilder:validation:Schemaless"},
	"default":          {"kubebuilder:default", "default"},
	"required":         {"kubebuilder:validation:Required", "required", "kubebuilder:validation:Optional", "optional", "k8s:required", "k8s:optional"},
	"nullable":         {"nullable"},
	"validations":      {"kubebuilder:validation:XValidation"},
	"preserve":         {"kubebuilder:pruning:PreserveUnknownFields", "kubebuilder:validation:XPreserveUnknownFields"},
	"listType":         {"listType"},
	"listMapKeys":      {"listMapKey"},
	"mapType":          {"mapType", "structType"},
	"intOrString":      {"kubebuilder:validation:XIntOrString"},
	"embedded":         {"kubebuilder:validation:EmbeddedResource", "kubebuilder:validation:XEmbeddedResource"},
}

// ruleKeyword is the keyword each property rule is about; the bound rules name theirs in the
// message (see keywordOf). Rules absent here (field-added, field-removed, description-changed,
// additional-properties-*, combinators, unknown-change) point at the field declaration.
var ruleKeyword = map[string]string{
	"multiple-of-added": "multipleOf", "multiple-of-changed": "multipleOf", "multiple-of-removed": "multipleOf",
	"pattern-added": "pattern", "pattern-changed": "pattern", "pattern-removed": "pattern",
	"enum-added": "enum", "enum-removed": "enum", "enum-value-added": "enum", "enum-value-removed": "enum",
	"format-added": "format", "format-changed": "format", "format-removed": "format", "format-unenforced": "format",
	"type-changed": "type", "type-removed": "type",
	"default-added": "default", "default-changed": "default", "default-removed": "default",
	"required-added": "required", "required-removed": "required",
	"nullable-added": "nullable", "nullable-removed": "nullable",
	"validation-rule-added": "validations", "validation-rule-changed": "validations", "validation-rule-removed": "validations",
	"validation-rule-implied": "validations", "validation-rule-loosened": "validations", "validation-rule-rewritten": "validations",
	"validation-message-changed": "validations", "validation-reason-changed": "validations",
	"preserve-unknown-fields-added": "preserve", "preserve-unknown-fields-removed": "preserve",
	"list-type-changed": "listType", "list-map-keys-changed": "listMapKeys", "map-type-changed": "mapType",
	"int-or-string-added": "intOrString", "int-or-string-removed": "intOrString",
	"embedded-resource-changed": "embedded",
}

// boundRules name their keyword as the message's first word ("maximum of .spec.size changed
// from 10 to 5"): one rule covers maximum, maxLength, maxItems and maxProperties.
var boundRules = map[string]bool{
	"min-added": true, "min-increased": true, "min-decreased": true, "min-removed": true,
	"max-added": true, "max-decreased": true, "max-increased": true, "max-removed": true,
}

// keywordOf is the schema keyword a finding is about, or "".
func keywordOf(rule, message string) string {
	if boundRules[rule] {
		word, _, _ := strings.Cut(message, " ")
		if _, ok := keywordMarkers[word]; ok {
			return word
		}
		return ""
	}
	return ruleKeyword[rule]
}

// pick chooses the marker that sets the keyword among the markers of a schema node (most
// specific first: the field's, then its types'). A CEL rule's marker is the one whose rule
// text is the finding's.
func pick(ms []marker, keyword, celRule string) (marker, bool) {
	names := keywordMarkers[keyword]
	if keyword != "validations" {
		return find(ms, names...)
	}
	for _, m := range ms {
		if m.is(names[0]) && celRule != "" && xvalidationRule(m.text) == celRule {
			return m, true
		}
	}
	return marker{}, false
}

// xvalidationRule reads the rule argument of an XValidation marker: rule="…" (a Go string
// literal, double- or back-quoted) or an unquoted value up to the next comma.
func xvalidationRule(text string) string {
	_, args, ok := strings.Cut(text, "XValidation:")
	if !ok {
		return ""
	}
	for args != "" {
		key, rest, ok := strings.Cut(args, "=")
		if !ok {
			return ""
		}
		key = strings.TrimSpace(key)
		var val string
		val, args = argValue(rest)
		if key == "rule" {
			return val
		}
	}
	return ""
}

// argValue reads one marker argument value and returns the text after its comma.
func argValue(s string) (string, string) {
	s = strings.TrimLeft(s, " ")
	if s != "" && (s[0] == '"' || s[0] == '`') {
		if q, err := strconv.QuotedPrefix(s); err == nil {
			v, _ := strconv.Unquote(q)
			rest := strings.TrimLeft(s[len(q):], " ")
			return v, strings.TrimPrefix(rest, ",")
		}
	}
	v, rest, _ := strings.Cut(s, ",")
	return strings.TrimSpace(v), rest
}
