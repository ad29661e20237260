package rules

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/finding"
)

var kebab = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All() {
		if !kebab.MatchString(r.ID) {
			t.Errorf("%q is not kebab-case", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("%s registered twice", r.ID)
		}
		seen[r.ID] = true
		if !strings.HasSuffix(r.Summary, ".") || !strings.HasSuffix(r.Doc, ".") {
			t.Errorf("%s: summary and doc must be full sentences ending in a full stop", r.ID)
		}
		if len(r.Doc) < 60 && r.Severity > finding.Info {
			t.Errorf("%s: doc too short to say why it breaks and what to do", r.ID)
		}
		if r.Severity > finding.Info && r.Advice == "" {
			t.Errorf("%s: a rule that can fail a build needs Advice for its messages", r.ID)
		}
		if r.Ratchetable && r.Level != PropertyLevel {
			t.Errorf("%s: only property rules can be ratcheted", r.ID)
		}
		if got, ok := Lookup(r.ID); !ok || got != r {
			t.Errorf("Lookup(%s) = %v, %v", r.ID, got, ok)
		}
	}
	for _, r := range All() {
		if r.Twin == "" {
			continue
		}
		twin, ok := Lookup(r.Twin)
		if !ok {
			t.Errorf("%s: twin %s is not registered", r.ID, r.Twin)
			continue
		}
		if twin.Severity >= r.Severity && r.ID != "default-added" {
			t.Errorf("%s: its loosening twin %s should be less severe", r.ID, twin.ID)
		}
	}
}

// Every tightening of a value must have its loosening twin, as oasdiff checks its rules.
func TestTighteningsHaveTwins(t *testing.T) {
	for _, r := range All() {
		if r.Ratchetable && r.Twin == "" && !strings.HasSuffix(r.ID, "-changed") && !strings.HasSuffix(r.ID, "-increased") && !strings.HasSuffix(r.ID, "-decreased") {
			t.Errorf("%s tightens values but names no loosening twin", r.ID)
		}
	}
}

// TestKeywordsCoverSchema fails when JSONSchemaProps has a field the walker does not know, so a
// Kubernetes upgrade that adds a keyword cannot slip past the fail-closed bookkeeping.
func TestKeywordsCoverSchema(t *testing.T) {
	known := map[string]bool{}
	for _, n := range keywordNames {
		known[n] = true
	}
	typ := reflect.TypeOf(apiextv1.JSONSchemaProps{})
	if typ.NumField() != int(numKeywords) {
		t.Errorf("JSONSchemaProps has %d fields, the keyword list %d", typ.NumField(), numKeywords)
	}
	for i := 0; i < typ.NumField(); i++ {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if !known[name] {
			t.Errorf("JSONSchemaProps field %s (%s) is not a known keyword", typ.Field(i).Name, name)
		}
	}
}

// TestDiffKeywordsSeesEveryField sets each field in turn and expects exactly its keyword to differ.
func TestDiffKeywordsSeesEveryField(t *testing.T) {
	typ := reflect.TypeOf(apiextv1.JSONSchemaProps{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		var b apiextv1.JSONSchemaProps
		v := reflect.ValueOf(&b).Elem().Field(i)
		if !setNonZero(v) {
			t.Errorf("cannot build a value for %s", f.Name)
			continue
		}
		got := diffKeywords(&apiextv1.JSONSchemaProps{}, &b).names()
		if len(got) != 1 || got[0] != name {
			t.Errorf("setting %s: differing keywords %v, want [%s]", f.Name, got, name)
		}
	}
}

func setNonZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Ptr:
		p := reflect.New(v.Type().Elem())
		if !setNonZero(p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Int64:
		v.SetInt(1)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setNonZero(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Struct:
		switch x := v.Addr().Interface().(type) {
		case *apiextv1.JSON:
			x.Raw = []byte(`1`)
		case *apiextv1.ValidationRule:
			x.Rule = "true"
		case *apiextv1.JSONSchemaPropsOrArray:
			x.Schema = &apiextv1.JSONSchemaProps{}
		case *apiextv1.JSONSchemaPropsOrBool:
			x.Allows = true
		case *apiextv1.ExternalDocumentation:
			x.URL = "u"
		case *apiextv1.JSONSchemaProps:
			x.Type = "string"
		default:
			return false
		}
	default:
		return false
	}
	return true
}
