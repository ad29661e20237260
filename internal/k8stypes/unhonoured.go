package k8stypes

// Unhonoured are fields that k8s.io/api removed from a built-in type's field because the
// built-in API never honoured them there, keyed by the type and field that held them and the
// removed field's name (core/v1.PersistentVolumeClaimSpec.resources claims). A CRD generated
// from a newer k8s.io/api drops them from every copy of that type; the value says why nothing
// that worked is lost. This is knowledge k8s.io/api's Go files do not carry (the type of the
// field changed, not a marker), kept here as data beside what they do carry.
var Unhonoured = map[string]string{
	"core/v1.PersistentVolumeClaimSpec.resources claims": "k8s.io/api gave PersistentVolumeClaimSpec.resources the type VolumeResourceRequirements, without claims: a claim never had an effect on a PersistentVolumeClaim, and the API server clears it on every PVC create and update (kubernetes/kubernetes#115928)",
}

// UnhonouredWhy says why the field name below the node at p was never honoured, or "".
func UnhonouredWhy(p Place, name string) string {
	if p.Owner == nil || p.Field == nil || p.Suffix != "" || p.Extended {
		return ""
	}
	return Unhonoured[p.Owner.Key+"."+p.Field.JSON+" "+name]
}
