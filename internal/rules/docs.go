package rules

import (
	"github.com/crdguard/crdguard/internal/finding"
)

var descriptionChanged = &Rule{
	ID: "description-changed", Severity: finding.Info, Level: PropertyLevel,
	Summary: "Documentation changed (description, title, example or externalDocs).",
	Doc:     "Documentation keywords do not affect validation, defaulting or pruning; changing them is always safe.",
}

var docRules = []*Rule{descriptionChanged}

// checkDocs judges the keywords that only document a schema.
func checkDocs(n *node) {
	for _, k := range []keyword{kwDescription, kwTitle, kwExample, kwExternalDocs} {
		if !n.changed(k) {
			continue
		}
		n.judge(k)
		side := finding.Head
		if n.new.Description == "" && k == kwDescription {
			side = finding.Base
		}
		n.emit(descriptionChanged, side, n.keyAt(side, k), nil, nil, "%s of %s changed", keywordNames[k], n.path)
	}
}
