// Package crd decodes CustomResourceDefinitions (apiextensions.k8s.io/v1 and v1beta1, YAML or
// JSON, one or many documents a file) into the v1 API type, and keeps each document's YAML
// nodes so every finding can name the line of the key that carries it.
package crd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// Kind is the kind of a CustomResourceDefinition document.
const Kind = "CustomResourceDefinition"

// The apiVersions a CRD document may have.
const (
	GroupVersionV1      = "apiextensions.k8s.io/v1"
	GroupVersionV1beta1 = "apiextensions.k8s.io/v1beta1"
)

// CRD is one decoded CustomResourceDefinition document.
type CRD struct {
	// Name is metadata.name, the identity CRDs are paired by.
	Name string
	// File is the path the document was read from, as the caller named it.
	File string
	// APIVersion is the document's own apiVersion (v1beta1 documents are converted to v1).
	APIVersion string
	// Line is the line where the document's content starts.
	Line int
	// Object is the CRD as the v1 API type, with the API server's defaults applied to its spec
	// (v1beta1 ones before the conversion).
	Object *apiextv1.CustomResourceDefinition
	// Unknown are the keys the CRD API does not define: decoding drops them, so the rules
	// cannot see them (see strict.go).
	Unknown []UnknownKey
	// Patch marks a document that lacks what a definition needs (group, names, versions): a
	// kustomize patch, a test assertion or a stub. Its Object is nil; it is never compared.
	Patch bool
	// PatchedBy names the kustomization whose CRD patches were applied to Object; the lines
	// stay those of the definition's own file.
	PatchedBy string

	root *yaml.Node
	// lazy holds what parses root again once Shed dropped it.
	lazy *lazyTree
	// shape is shapeOf(root): copies of different shapes are not the same text (SameText).
	shape uint64
	// relocated says Relocate moved the lines: the file's text no longer gives the tree.
	relocated bool
}

// Pair is one CRD (paired by metadata.name) before and after a change; Old is nil for a new
// CRD, New is nil for a removed one.
type Pair struct {
	Old, New *CRD
	// Elsewhere are the base's copies of the CRD when New is a copy at a new path that is
	// compared with nothing (a past release's bundle): the CRD is not new, this copy is.
	Elsewhere []*CRD
	// OldGo and NewGo are what each side's Go sources say of the embedded types (nil: the side
	// has none read, such as a file or a cluster).
	OldGo, NewGo GoTypes
}

// GoTypes is a fact of one side's Go sources, for CRDs that controller-gen generates from
// them: which built-in Kubernetes type the Go field behind a schema node is declared with. The
// schema alone may not say it for a small type stripped of its descriptions (a lone name is
// LocalObjectReference's or a project's own reference).
type GoTypes interface {
	// Builtin is the key k8stypes gives the k8s.io/api or apimachinery type
	// (core/v1.LocalObjectReference) that declares the node at path (.spec.ref, .spec.refs[*])
	// of the kind's version, or "" when the sources do not say so: no Go type for the CRD, a
	// project's own type, a path they do not have.
	Builtin(group, version, kind, path string) string
}

// Name is the CRD name the pair stands for.
func (p Pair) Name() string {
	if p.New != nil {
		return p.New.Name
	}
	if p.Old != nil {
		return p.Old.Name
	}
	return ""
}

// Problem is a document that is or may be a CRD but cannot be decoded.
type Problem struct {
	File    string
	Line    int
	Name    string // metadata.name when it could be read
	Message string
	// TooLarge says the file was not read for its size (larger than the limit): what it holds
	// is unknown, not broken, so no earlier version stands in for it.
	TooLarge bool
}

// Error renders the problem as file:line: message.
func (p Problem) Error() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message) }

var scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}

// Parse reads every document of a YAML or JSON file and returns its CRDs, patches (Patch set)
// among them. Documents of other kinds are skipped silently. Documents that claim to be CRDs but
// do not decode, and YAML that does not parse at all, come back as problems with the line they
// concern; documents read before a syntax error are still returned. The items of a list are
// documents of their own (flattenLists).
func Parse(file string, data []byte) ([]*CRD, []Problem) {
	c := Read(file, data, false)
	return c.CRDs, c.Problems
}

// Contents is what one file holds, as Read finds it.
type Contents struct {
	// CRDs and Problems are what Parse returns.
	CRDs     []*CRD
	Problems []Problem
	// Objects are the file's other objects (ParseObjects), when Read was asked for them.
	Objects []*Object
	// Count is how many objects the file holds: documents that name a kind, each item of a list
	// counted and the list not, as kubectl applies them. A file of several is applied as a whole.
	Count int
	// Unparsed are the problems of the file as YAML (a syntax error, too many documents), also in
	// Problems: what a file that holds no CRD document has wrong with it.
	Unparsed []Problem
}

// Read is Parse, ParseObjects when objects is set, and the count of objects, of a file it
// parses once.
func Read(file string, data []byte, objects bool) Contents {
	docs, problem := parseDocuments(file, data)
	docs = flattenLists(docs)
	merges := hasMergeKeys(data)
	var c Contents
	c.CRDs, c.Problems = decodeDocuments(file, docs, merges)
	c.Problems, c.Unparsed = append(c.Problems, problem...), problem
	if objects {
		c.Objects = objectsOf(file, docs, merges)
	}
	for _, doc := range docs {
		if child(resolveAlias(doc.Content[0]), "kind") != nil {
			c.Count++
		}
	}
	return c
}

// parseDocuments parses the documents of a file, fast where it can (parseFast); a syntax error or
// a file of too many documents ends the list with a problem.
func parseDocuments(file string, data []byte) (docs []*yaml.Node, problems []Problem) {
	if docs, ok := parseFast(data); ok && len(docs) <= MaxDocuments {
		return docs, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		if len(docs) == MaxDocuments {
			return docs, []Problem{{File: file, Line: 1, Message: fmt.Sprintf("more than %d YAML documents in one file; the rest was not read", MaxDocuments)}}
		}
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			line := min(errorLine(err), lineCount(data))
			p := Problem{File: file, Line: line, Message: "YAML does not parse: " + lineRE.ReplaceAllString(trimYAMLError(err), "line "+strconv.Itoa(line))}
			// The names let a caller tell a broken CRD from a removed one.
			for _, name := range guessNames(data) {
				p.Name = name
				problems = append(problems, p)
			}
			if p.Name == "" {
				problems = append(problems, p)
			}
			return docs, problems
		}
		if len(doc.Content) > 0 {
			docs = append(docs, &doc)
		}
	}
}

// decodeDocuments decodes the documents of a file, parsed and lists flattened.
func decodeDocuments(file string, docs []*yaml.Node, merges bool) (crds []*CRD, problems []Problem) {
	for _, doc := range docs {
		c, p := decodeDocument(file, doc, merges)
		if p != nil {
			problems = append(problems, *p)
		}
		if c != nil {
			crds = append(crds, c)
		}
	}
	return crds, problems
}

// decodeDocument decodes one document of a file; merges says the file may hold merge keys.
func decodeDocument(file string, doc *yaml.Node, merges bool) (*CRD, *Problem) {
	// Duplicates are looked for before merge keys are expanded: the expansion keeps one of each.
	if top := resolveAlias(doc.Content[0]); top.Kind == yaml.MappingNode && scalarAt(top, "kind") == Kind {
		if err := duplicateKey(doc); err != nil {
			return nil, &Problem{File: file, Line: err.line, Name: guessName(doc), Message: err.msg}
		}
	}
	if merges {
		if err := expandMerges(doc); err != nil {
			return nil, &Problem{File: file, Line: err.line, Name: guessName(doc), Message: err.msg}
		}
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, nil
	}
	kind, apiVersion := scalarAt(root, "kind"), scalarAt(root, "apiVersion")
	if kind != Kind {
		return nil, nil
	}
	name := ""
	if meta := child(root, "metadata"); meta != nil {
		name = scalarAt(meta, "name")
	}
	if !isDefinition(root) {
		return &CRD{Name: name, File: file, APIVersion: apiVersion, Line: root.Line, Patch: true, root: root, shape: shapeOf(root, root.Line)}, nil
	}
	fail := func(line int, format string, args ...any) (*CRD, *Problem) {
		return nil, &Problem{File: file, Line: line, Name: name, Message: fmt.Sprintf(format, args...)}
	}
	if apiVersion != GroupVersionV1 && apiVersion != GroupVersionV1beta1 {
		return fail(keyLine(root, "apiVersion", root.Line), "unsupported apiVersion %q for a CustomResourceDefinition (want %s or %s)", apiVersion, GroupVersionV1, GroupVersionV1beta1)
	}
	if name == "" {
		return fail(root.Line, "CustomResourceDefinition has no metadata.name")
	}
	obj, err := fastDecode(apiVersion, root)
	if err != nil {
		raw, jerr := toJSON(root)
		if jerr != nil {
			if ne, ok := jerr.(*nodeError); ok {
				return fail(ne.line, "%s", ne.msg)
			}
			return fail(root.Line, "%v", jerr)
		}
		obj, err = decodeObject(apiVersion, raw)
		if err != nil {
			return fail(fieldLine(root, err), "not a valid %s CustomResourceDefinition: %v", apiVersion, err)
		}
	}
	if obj.Name != name {
		return fail(root.Line, "metadata.name %q does not decode as a string", name)
	}
	serverDefaults(obj)
	return &CRD{Name: name, File: file, APIVersion: apiVersion, Line: root.Line, Object: obj, Unknown: unknownKeys(root, apiVersion), root: root, shape: shapeOf(root, root.Line)}, nil
}

// isDefinition reports whether a CRD document has what the API server needs to define a
// resource: a group, names and versions (spec.version in v1beta1). Anything less is a patch or
// an assertion, and judging it as a definition only produces false findings.
func isDefinition(root *yaml.Node) bool {
	spec := child(root, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode || scalarAt(spec, "group") == "" {
		return false
	}
	names := child(spec, "names")
	if names == nil || names.Kind != yaml.MappingNode || len(names.Content) == 0 {
		return false
	}
	if v := child(spec, "versions"); v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
		return true
	}
	return scalarAt(spec, "version") != ""
}

// serverDefaults applies the API server's defaulting of a v1 CRD's spec (listKind, singular,
// the conversion strategy, a webhook service's port), so both sides are compared as the server
// stores them: setting a field to its default is no change. The status is the document's own:
// the server writes it, and rules read it only where a document states it.
func serverDefaults(c *apiextv1.CustomResourceDefinition) {
	status := c.Status
	scheme.Default(c)
	c.Status = status
}

// errSlowPath sends a document to the JSON decoder.
var errSlowPath = errors.New("decode through JSON")

// fastDecode decodes a v1 CRD with its schemas read straight from the YAML (see schema.go); any
// error means: decode the whole document through JSON instead, which also words the errors.
func fastDecode(apiVersion string, root *yaml.Node) (*apiextv1.CustomResourceDefinition, error) {
	if apiVersion != GroupVersionV1 {
		return nil, errSlowPath
	}
	var schemas []*yaml.Node
	skip := map[*yaml.Node]bool{}
	if spec := child(root, "spec"); spec != nil {
		if versions := child(spec, "versions"); versions != nil && versions.Kind == yaml.SequenceNode {
			for _, v := range versions.Content {
				s := child(child(v, "schema"), "openAPIV3Schema")
				if s != nil && isNull(s) {
					s = nil
				}
				schemas = append(schemas, s)
				if s != nil {
					skip[s] = true
				}
			}
		}
	}
	raw, err := toJSONSkipping(root, skip)
	if err != nil {
		return nil, err
	}
	out := &apiextv1.CustomResourceDefinition{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, out); err != nil {
		return nil, err
	}
	if len(out.Spec.Versions) != len(schemas) {
		return nil, errSlowPath
	}
	for i, n := range schemas {
		if n == nil {
			continue
		}
		s, ok := decodeSchema(n, 0)
		if !ok || out.Spec.Versions[i].Schema == nil {
			return nil, errSlowPath
		}
		out.Spec.Versions[i].Schema.OpenAPIV3Schema = &s
	}
	return out, nil
}

// decodeObject decodes JSON into the v1 type. v1beta1 goes through the internal version, as the
// API server does, but without defaulting: the v1beta1 default preserveUnknownFields: true would
// otherwise turn every v1beta1 → v1 migration into a bogus pruning finding.
func decodeObject(apiVersion string, raw []byte) (*apiextv1.CustomResourceDefinition, error) {
	out := &apiextv1.CustomResourceDefinition{}
	if apiVersion == GroupVersionV1 {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	in := &apiextv1beta1.CustomResourceDefinition{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, in); err != nil {
		return nil, err
	}
	// v1beta1 has defaults of its own (preserveUnknownFields: true above all), which the API
	// server applies before it stores the CRD as v1.
	status := in.Status
	scheme.Default(in)
	in.Status = status
	internal := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(in, internal, nil); err != nil {
		return nil, fmt.Errorf("converting v1beta1: %w", err)
	}
	if err := scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("converting to v1: %w", err)
	}
	return out, nil
}

var (
	lineRE = regexp.MustCompile(`line (\d+)`)
	// nameRE finds the first name: under a top-level metadata: in text that does not parse.
	nameRE = regexp.MustCompile(`(?m)^metadata:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*["']?([A-Za-z0-9.-]+)`)
)

// fieldRE finds the field a JSON decoding error names, e.g. "Go struct field
// CustomResourceDefinitionVersion.spec.versions.served of type bool".
var fieldRE = regexp.MustCompile(`Go struct field \w+\.([\w.$-]+) of type`)

// fieldLine returns the line of the first key matching the dotted field path of a decoding
// error (sequence items are searched in order), or the document's line.
func fieldLine(root *yaml.Node, err error) int {
	m := fieldRE.FindStringSubmatch(err.Error())
	if m == nil {
		return root.Line
	}
	line := root.Line
	n := root
	for _, key := range strings.Split(m[1], ".") {
		n = resolveAlias(n)
		if n.Kind == yaml.SequenceNode {
			var found *yaml.Node
			for _, it := range n.Content {
				if c := child(it, key); c != nil {
					found = it
					break
				}
			}
			if found == nil {
				return line
			}
			n = found
		}
		next, l := step(resolveAlias(n), key)
		if next == nil {
			return line
		}
		n, line = next, l
	}
	return line
}

// guessNames finds the metadata.name of every CRD in text that is not valid YAML.
func guessNames(data []byte) []string {
	var names []string
	for _, m := range nameRE.FindAllSubmatch(data, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// parserProblems are the YAML parser's (not scanner's) messages. yaml.v3 reports their line
// zero-based (it adds one only for scanner errors), so they need one more to be a real line.
var parserProblems = []string{
	"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "found undefined tag handle", "found incompatible YAML document",
	"found duplicate %TAG",
}

func errorLine(err error) int {
	msg := err.Error()
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return 1
	}
	n, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return 1
	}
	for _, p := range parserProblems {
		if strings.Contains(msg, p) {
			n++
			break
		}
	}
	return max(n, 1)
}

func trimYAMLError(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// lineCount counts lines as YAML does: LF, CRLF and a lone CR each end one.
func lineCount(data []byte) int {
	n := 1
	for i, c := range data {
		if c == '\n' || c == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			n++
		}
	}
	return n
}

// MentionsCRD reports whether raw file content could hold a CRD, so a caller can skip the files
// that cannot without parsing them, and tell a broken CRD file from an unrelated broken YAML
// file. It never misses a document Parse reads as a CRD: either the kind is spelled out, or it
// is written with escapes, which only double-quoted YAML and JSON strings have, and of which only
// \x, \u, \U (a letter by its code) and an escaped line break (CustomResource\⏎Definition)
// can make the letters of the kind. A file with such an escape and no spelled-out kind is
// parsed: it could hold a CRD when a document (or list item) decodes as one, or when it does
// not parse at all.
func MentionsCRD(data []byte) bool {
	if bytes.Contains(data, []byte(Kind)) {
		return true
	}
	return mayEscapeLetters(data) && readsAsCRD(data, true)
}

// HoldsCRD reports whether data holds a CRD: a document that decodes as one, or fails to as one,
// or text that does not parse. A file that only mentions the kind (an action.yml describing
// what it checks) holds none.
func HoldsCRD(data []byte) bool {
	return MentionsCRD(data) && readsAsCRD(data, true)
}

// EscapedCRD reports whether data, whose text need not spell the kind, holds a document that
// decodes as a CRD (or a broken CRD) with its kind written with escapes. Unlike MentionsCRD, text
// that does not parse holds none: for a template with its actions set aside, which may not
// parse for reasons of its own.
func EscapedCRD(data []byte) bool {
	return mayEscapeLetters(data) && readsAsCRD(data, false)
}

// readsAsCRD reports whether a document of data decodes as a CRD, or fails to as one; unparsed
// says whether text that does not parse counts too.
func readsAsCRD(data []byte, unparsed bool) bool {
	c := Read("", data, false)
	return len(c.CRDs) > 0 || len(c.Problems) > len(c.Unparsed) || unparsed && len(c.Unparsed) > 0
}

// mayEscapeLetters reports whether data has a backslash escape that YAML or JSON decodes to
// letters or that joins two lines of a string: \x, \u, \U, or a backslash ending a line. The
// other escapes make quotes, slashes, spaces and control characters, none of them in a kind.
func mayEscapeLetters(data []byte) bool {
	for i := bytes.IndexByte(data, '\\'); i >= 0 && i+1 < len(data); {
		switch data[i+1] {
		case 'x', 'u', 'U', '\n', '\r':
			return true
		case '\\':
			i++ // an escaped backslash: the next one starts no escape
		}
		j := bytes.IndexByte(data[i+1:], '\\')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}
