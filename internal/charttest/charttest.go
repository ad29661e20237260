// Package charttest holds the widgets chart that the chart tests of check, cli and action
// share: a CRD template shaped like the ones operators ship (behind a flag, with a helper's
// labels, values, .Release and .Chart, and tpl), its values, and writers for a chart's files.
package charttest

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ChartYAML is the widgets chart's Chart.yaml.
const ChartYAML = "apiVersion: v2\nname: widgets\nversion: 1.0.0\nappVersion: \"1.0\"\n"

// Helpers is the chart's templates/_helpers.tpl: the labels helper Template includes.
const Helpers = `{{- define "widgets.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
`

// Values is the chart's values.yaml: CRDs on, maximum 10, a description rendered with tpl.
const Values = "crds:\n  enabled: true\nmaxSize: 10\ndescription: \"A widget of {{ .Release.Name }}.\"\n"

// Template is the CRD template; its lines (1-based) are what the tests locate findings on: 9
// keep, 28 size, 30 maximum, 31 color, 35 description.
const Template = `{{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  labels:
    {{- include "widgets.labels" . | nindent 4 }}
  annotations:
    helm.sh/resource-policy: keep
    meta.helm.sh/release-namespace: {{ .Release.Namespace }}
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
                maximum: {{ .Values.maxSize }}
              color:
                type: string
              note:
                type: string
                description: {{ tpl .Values.description . | quote }}
{{- end }}
`

// color is the field the tests remove (lines 31-32 of Template).
const color = "              color:\n                type: string\n"

// WithoutColor is a CRD text (Template or Plain) with .spec.color removed.
func WithoutColor(crd string) string { return strings.Replace(crd, color, "", 1) }

// Plain is Template as its chart renders it, written as a plain file, with a description of
// one's own (a quoted YAML string).
func Plain(description string) string {
	return strings.NewReplacer("{{- if .Values.crds.enabled }}\n", "", "{{- end }}\n", "",
		"    {{- include \"widgets.labels\" . | nindent 4 }}\n", "    app.kubernetes.io/name: widgets\n",
		"{{ .Release.Namespace }}", "default", "{{ .Values.maxSize }}", "10",
		"{{ tpl .Values.description . | quote }}", description).Replace(Template)
}

// Chart is the files of the widgets chart at dir ("" for the root) with a CRD template and
// values: Chart.yaml, values.yaml, templates/_helpers.tpl and templates/crds/widgets.yaml.
func Chart(dir, template, values string) map[string]string {
	return map[string]string{
		path.Join(dir, "Chart.yaml"): ChartYAML, path.Join(dir, "values.yaml"): values,
		path.Join(dir, "templates/_helpers.tpl"): Helpers, path.Join(dir, "templates/crds/widgets.yaml"): template,
	}
}

// TemplatePath is where Chart puts the CRD template in a chart at dir.
func TemplatePath(dir string) string { return path.Join(dir, "templates/crds/widgets.yaml") }

// Writer writes one file by slash-separated path (gittest.Repo is one, Folder another).
type Writer interface {
	Write(path string, data []byte)
}

// Write writes files in the order of their paths, so commits and folders are the same each run.
func Write(w Writer, files map[string]string) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w.Write(name, []byte(files[name]))
	}
}

// Folder is a Writer into a folder of the file system.
type Folder struct {
	T   testing.TB
	Dir string
}

// Write writes a file below the folder, creating folders.
func (f Folder) Write(name string, data []byte) {
	f.T.Helper()
	p := filepath.Join(f.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.T.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		f.T.Fatal(err)
	}
}
