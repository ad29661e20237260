package rules

import (
	"github.com/crdguard/crdguard/internal/finding"
)

// Sample rules: custom resources in the repository (config/samples, examples, docs) checked
// against the base and head schemas by the API server's own validation.

var (
	sampleInvalid = &Rule{
		ID: "sample-invalid", Severity: finding.Error, Level: PropertyLevel,
		Summary: "A sample object valid under the base schema is invalid under head (warning when it was invalid under both).",
		Advice:  "objects like this one, which users copy from your samples, are refused; fix the schema change or the sample",
		Doc:     "Samples and examples are what users copy, and what stored objects look like. Each custom resource in the repository whose group and kind belong to a changed CRD is validated as the API server would (pruning, defaulting, OpenAPI validation, list sets and maps, CEL) against the base and the head schema. An object that was valid and is now refused shows exactly which existing objects break; the message quotes the API server and says, in the words of the rule that changed, which updates validation ratcheting still lets stored objects like it make, or that no stored object can hold the value (a field new in this change).",
	}
	samplePruned = &Rule{
		ID: "sample-pruned", Severity: finding.Error, Level: PropertyLevel,
		Summary: "The head schema silently drops a field that a sample object sets.",
		Advice:  "the API server deletes this field from objects without an error; keep it in the schema",
		Doc:     "Pruning removes every field the schema does not describe, silently, on the next write. A sample that sets a field the head schema no longer has shows data that stored objects lose. Keep the field in the schema (deprecated), or move it with a conversion webhook.",
	}
)

// SampleStoredNote starts what a sample-invalid message says of stored objects like the sample,
// after the API server's error (the changelog leaves it out).
const SampleStoredNote = "; stored objects "

var sampleRules = []*Rule{sampleInvalid, samplePruned}

// SampleFinding builds a sample-invalid or sample-pruned finding about the sample object.
func SampleFinding(pruned bool, sev finding.Severity, crdName, version, path, object, message string, loc finding.Location) finding.Finding {
	r := sampleInvalid
	if pruned {
		r = samplePruned
	}
	msg := message
	if r.Advice != "" {
		msg += ": " + r.Advice
	}
	return finding.Finding{Rule: r.ID, Severity: sev, CRD: crdName, Version: version, Path: path, Message: msg, Location: loc,
		Object: object, Subject: object + "\n" + message}
}
