package source

import (
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
)

// placeholder stands in for a templated scalar value: valid as a name, label or annotation
// value, so a template expression never becomes invalid-crd.
const placeholder = "crdguard-templated"

// Placeholder is what a templated scalar value reads as, for rules that must tell a templated
// value from a written one.
const Placeholder = placeholder

var (
	// envsubst is a variable as envsubst and clusterctl expand it: ${VAR}, ${VAR:=default}, ….
	envsubst = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=+?][^}]*)?\}`)
	// action is one Helm / Go template action.
	action = regexp.MustCompile(`\{\{.*?\}\}`)
	// blockAction is an action that writes indented YAML (a mapping or a list) of its own.
	blockAction = regexp.MustCompile(`\|\s*n?indent\s+\d+|toYaml`)
	// schemaKey starts the part of a CRD that must not be templated.
	schemaKey = regexp.MustCompile(`^(\s*)(?:- )?(?:openAPIV3Schema|validation):\s*$`)
)

// detemplate makes a Helm or envsubst template of CRDs plain YAML with the same lines: lines
// that hold only template actions ({{- if … }}, {{- end }}, {{ include … }}) become blank, and
// templated scalar values become a placeholder. It also returns the line of the first template
// inside a schema (0 when there is none): such a file cannot be checked.
func detemplate(data []byte) ([]byte, int) {
	lines := strings.Split(blankMultiLineActions(string(data)), "\n")
	schemaIndent, inSchema := -1, 0
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		actionOnly := strings.HasPrefix(trimmed, "{{") && strings.TrimSpace(action.ReplaceAllString(trimmed, "")) == ""
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if actionOnly {
			indent = nextIndent(lines[i+1:]) // actions sit at any column; what they wrap counts
		}
		if schemaIndent >= 0 && indent <= schemaIndent {
			schemaIndent = -1
		}
		templated := false
		if actionOnly {
			lines[i], templated = "", true
		} else if prefix, value, ok := scalarValue(line); ok && templatedValue(value, schemaIndent < 0) {
			lines[i], templated = prefix+templatedStandIn(value), true
		}
		if templated && schemaIndent >= 0 && inSchema == 0 {
			inSchema = i + 1
		}
		if m := schemaKey.FindStringSubmatch(line); m != nil && schemaIndent < 0 {
			schemaIndent = len(m[1])
		}
	}
	return []byte(strings.Join(lines, "\n")), inSchema
}

// templatedStandIn is what a templated value becomes: a placeholder string, or an empty mapping
// for an action that writes a block of YAML in its place (labels: {{- include "labels" . |
// nindent 4 }}, Bitnami's charts' idiom), where a string would not decode.
func templatedStandIn(value string) string {
	if strings.HasPrefix(value, "{{") && blockAction.MatchString(value) {
		return "{}"
	}
	return placeholder
}

// blankMultiLineActions empties every template action that spans lines, such as the licence
// header {{- /* … */ -}} Helm charts open their templates with, keeping its line breaks so every
// line keeps its number.
func blankMultiLineActions(text string) string {
	var b strings.Builder
	for {
		start := strings.Index(text, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(text[start:], "}}")
		if end < 0 {
			break
		}
		end += start + 2
		b.WriteString(text[:start])
		if act := text[start:end]; strings.Contains(act, "\n") {
			b.WriteString(strings.Repeat("\n", strings.Count(act, "\n")))
		} else {
			b.WriteString(act)
		}
		text = text[end:]
	}
	b.WriteString(text)
	return b.String()
}

// nextIndent is the indentation of the next line of YAML content (-1 at the end).
func nextIndent(lines []string) int {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "{{") && strings.TrimSpace(action.ReplaceAllString(t, "")) == "" {
			continue
		}
		return len(l) - len(strings.TrimLeft(l, " "))
	}
	return -1
}

// scalarValue splits "  key: value" or "  - value" into the part before the value and the value
// without its quotes; ok is false for lines that are not a plain one-line scalar.
func scalarValue(line string) (prefix, value string, ok bool) {
	rest := strings.TrimLeft(line, " ")
	at := len(line) - len(rest)
	if strings.HasPrefix(rest, "- ") {
		at += 2
		rest = rest[2:]
	}
	if k := strings.Index(rest, ": "); k > 0 && !strings.ContainsAny(rest[:k], `"'{`) {
		at += k + 2
		rest = rest[k+2:]
	} else if at == len(line)-len(strings.TrimLeft(line, " ")) {
		return "", "", false // neither a key nor a list item
	}
	v := strings.TrimSpace(rest)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if v == "" || v[0] == '|' || v[0] == '>' {
		return "", "", false
	}
	return line[:at], v, true
}

// templatedValue reports whether a scalar is filled in by a template. Outside the schema any
// action counts (app: '{{ .Release.Name }}-x'); inside, text that merely mentions template
// syntax (a description) does not: only a value that starts with an action or is one
// envsubst variable.
func templatedValue(v string, outsideSchema bool) bool {
	if strings.HasPrefix(v, "{{") || envsubst.FindString(v) == v {
		return true
	}
	return outsideSchema && (action.MatchString(v) || !strings.Contains(v, " ") && envsubst.MatchString(v))
}

// hasTemplate reports whether a file has template actions or envsubst variables where YAML
// structure or values are expected.
func hasTemplate(data []byte) bool {
	if _, ok := templateLine(data); ok {
		return true
	}
	if !bytes.Contains(data, []byte("{{")) && !bytes.Contains(data, []byte("${")) {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if _, v, ok := scalarValue(line); ok && templatedValue(v, true) {
			return true
		}
	}
	return false
}

// isTemplate reports whether a file holds a template action ({{ … }}) or an envsubst variable
// (${VAR}).
func isTemplate(data []byte) bool {
	return bytes.Contains(data, []byte("{{")) && bytes.Contains(data, []byte("}}")) || envsubst.Match(data)
}

// outsideChart is the chart-not-rendered problem of a template outside any Helm chart that does
// not read as YAML: crdguard renders charts only, so what it defines is unknown. has, when not
// nil, says which files the side holds: a templates/ folder beside values.yaml or a
// Chart.template.yaml but no Chart.yaml is a chart whose Chart.yaml a build writes
// (cert-manager's deploy/charts/cert-manager), and the message says so.
func outsideChart(name string, data []byte, problems []crd.Problem, has func(string) bool) ChartProblem {
	p := problems[0]
	var names []string
	for _, u := range problems {
		if u.Name != "" {
			names = append(names, u.Name)
		}
	}
	if len(names) == 0 {
		names = templateNames(name, data)
	}
	if has == nil {
		has = func(string) bool { return false }
	}
	if dir, sub, besides := chartLikeOf(name, has); sub == HelmTemplates {
		return ChartProblem{File: name, Line: p.Line, Names: names, Message: "a Helm template in " + path.Join(dir, sub) + ", but " + dir + " has no Chart.yaml (it has " + besides + ": is Chart.yaml written when the chart is built?), so it is no chart crdguard can render, and the file does not read as YAML without rendering (" + p.Message + "): its CRDs are not compared; commit Chart.yaml, compare what the chart renders instead (helm template first, or crdguard diff on the built chart folders), or leave the file out with paths or exclude in .crdguard.yaml"}
	}
	return ChartProblem{File: name, Line: p.Line, Names: names, Message: "a template (Helm {{ }} or envsubst ${VAR}) outside any Helm chart, which does not read as YAML without rendering (" + p.Message + "): its CRDs are not compared; crdguard renders charts only (a folder with a Chart.yaml): compare what it renders instead (helm template or envsubst first, or crdguard diff on the chart folders), or leave the file out with paths or exclude in .crdguard.yaml"}
}
