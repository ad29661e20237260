package rules

import "testing"

// TestUnhandledFields: crdify's unhandled error is a go-cmp diff whose spaces go-cmp picks at
// random (a space or U+00A0); the fields it names are the same either way.
func TestUnhandledFields(t *testing.T) {
	for _, sp := range []string{" ", "\u00a0"} {
		for _, tc := range []struct{ in, want string }{
			{"unhandled changes found :\n" +
				" " + sp + "&v1.JSONSchemaProps{\n" +
				" " + sp + "\t... // 41 identical fields\n" +
				" " + sp + "\tXListType: nil,\n" +
				" " + sp + "\tXValidations: v1.ValidationRules{\n" +
				" " + sp + "\t\t{\n" +
				"-" + sp + "\t\t\tRule: \"self.a\",\n" +
				"+" + sp + "\t\t\tRule: \"self.b\",\n" +
				" " + sp + "\t\t},\n" +
				" " + sp + "\t},\n" +
				"-" + sp + "\tFormat: \"date\",\n" +
				"+" + sp + "\tFormat: \"date-time\",\n" +
				" " + sp + "}\n",
				"unhandled changes found in format, x-kubernetes-validations"},
			{"unhandled changes found :\n" + " " + sp + "&v1.JSONSchemaProps{\n}\n", "unhandled changes found"},
			{"no diff at all", "no diff at all"},
		} {
			if got := unhandledFields(tc.in); got != tc.want {
				t.Errorf("unhandledFields(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}
