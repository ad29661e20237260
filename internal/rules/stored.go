package rules

import (
	"github.com/crdguard/crdguard/internal/finding"
)

// Stored-object rules: the custom resources a live cluster stores (kube://NAME, check
// --cluster), read through the API and validated against the head schema by the API server's
// own code (DESIGN §6). Their messages name the object and the field, never its values.

var (
	storedObjectInvalid = &Rule{
		ID: "stored-object-invalid", Severity: finding.Error, Level: PropertyLevel,
		Summary: "An object stored in the cluster is refused by the head schema on its next update (warning when only a create of it would be refused).",
		Advice:  "fix this object before the upgrade, or keep the schema accepting it",
		Doc:     "With a live cluster as the old side, crdguard lists the objects of each changed CRD (paged, at most --max-objects per CRD) and validates each as the API server would after the upgrade, read through the head schema (pruned and defaulted). An object that its next update would refuse is an error: its controller can no longer write it. Validation ratcheting (Kubernetes 1.30 and later, see kubernetesVersion) lets an update keep an invalid value it does not change; a missing required field only while its parent object is unchanged, what an allOf, anyOf, oneOf or not of an ancestor requires only while that ancestor is, and a CEL rule that uses oldSelf never. crdguard does not count on it for a value of the wrong type. An object that only a create would refuse (a restore from backup, a GitOps re-create) is a warning, and so is one the installed schema refuses already. Fix the objects first, or keep the schema accepting them.",
	}
	storedObjectPruned = &Rule{
		ID: "stored-object-pruned", Severity: finding.Error, Level: PropertyLevel,
		Summary: "The head schema silently drops a field that an object stored in the cluster holds.",
		Advice:  "the API server deletes this data from the object on its next write, without an error; keep the field in the schema",
		Doc:     "Pruning removes every field the schema does not describe, on read and on the next write, silently. A field that stored objects hold and the head schema no longer describes is data those objects lose after the upgrade. Keep the field (deprecated), or move the data with a conversion webhook before removing it.",
	}
)

var storedRules = []*Rule{storedObjectInvalid, storedObjectPruned}

// StoredFinding builds a stored-object-invalid or stored-object-pruned finding about obj;
// subject tells apart findings of one object at one path.
func StoredFinding(pruned bool, sev finding.Severity, crdName, version, path string, obj finding.ObjectRef, subject, message string, loc finding.Location) finding.Finding {
	r := storedObjectInvalid
	if pruned {
		r = storedObjectPruned
	}
	return finding.Finding{Rule: r.ID, Severity: sev, CRD: crdName, Version: version, Path: path, Message: message + ": " + r.Advice,
		Location: loc, Stored: &obj, Subject: obj.APIVersion + "\n" + obj.String() + "\n" + subject}
}
