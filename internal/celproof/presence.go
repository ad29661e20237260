package celproof

import (
	"k8s.io/apiserver/pkg/cel/environment"
)

// Presence reads a rule that only tests which fields of self are set (`has(self.a) !=
// has(self.b)`, "exactly one of" written in CEL) as a function of those fields' presence, so that
// it can be judged together with combinators that only require fields. fields are the fields it
// tests; ok is false for any other rule (one that reads a value, calls a function, or loops).
func Presence(rule string) (fields []string, holds func(present func(string) bool) bool, ok bool) {
	parsed, iss := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv().Parse(rule)
	if iss.Err() != nil {
		return nil, nil, false
	}
	t := toTerm(parsed.NativeRep().Expr())
	f := &formula{}
	if !f.atomsOf(t) {
		return nil, nil, false
	}
	for _, a := range f.atoms {
		if a.kind != "has" || a.args[0].kind != "ident" || a.args[0].name != "self" || a.args[0].shown != "" {
			return nil, nil, false
		}
		fields = append(fields, a.name)
	}
	return fields, func(present func(string) bool) bool {
		vals := make([]truth, len(fields))
		for i, name := range fields {
			if present(name) {
				vals[i] = tTrue
			}
		}
		return f.eval(t, vals) == tTrue
	}, true
}
