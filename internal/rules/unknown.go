package rules

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

var unknownChange = &Rule{
	ID: "unknown-change", Severity: finding.Error, Level: PropertyLevel,
	Summary: "A schema difference that no rule classifies (fail closed).",
	Advice:  "crdguard cannot tell whether this is safe; review it by hand and acknowledge it, or set failMode: open",
	Doc:     "crdguard fails closed: any difference between two schemas (or version settings) that no rule judged is reported with the names of the keywords that differ, as an error, or as a warning with failMode: open. Review the change by hand; if it is safe, acknowledge the finding with an ignore entry that gives the reason.",
}

var unknownRules = []*Rule{unknownChange}

// unknown reports the keywords of a node that differ and that no check judged.
func (n *node) unknown(left keywordSet) {
	names := left.names()
	n.emit(unknownChange, finding.Head, n.at(finding.Head, names[0]), nil, nil, "%s changed in a way crdguard does not classify (%s)", n.path, strings.Join(names, ", "))
}
