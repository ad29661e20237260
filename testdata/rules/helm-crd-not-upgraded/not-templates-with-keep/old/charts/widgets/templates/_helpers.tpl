{{- define "widgets.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
{{- end }}
