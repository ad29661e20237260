package report

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

func severityIcon(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "❌ error"
	case finding.Warning:
		return "⚠️ warning"
	}
	return "ℹ️ info"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
