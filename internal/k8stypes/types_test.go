package k8stypes

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// eager decodes the data file whole, as Decode did before it indexed lines: the reference for
// what the lazy set must answer.
func eager(t *testing.T, b []byte) (types []*Type, byField, byDoc map[string][]string) {
	t.Helper()
	var all struct {
		Types []*Type `json:"types"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	byField, byDoc = map[string][]string{}, map[string][]string{}
	for _, ty := range all.Types {
		if ty.Inline || ty.Root {
			continue
		}
		for _, f := range ty.Fields {
			byField[f.JSON] = append(byField[f.JSON], ty.Key)
		}
		if ty.Doc != "" {
			byDoc[ty.Doc] = append(byDoc[ty.Doc], ty.Key)
		}
	}
	return all.Types, byField, byDoc
}

// TestDecodeIsTheWholeDecode: the index Decode builds from scanning each line, and every type
// it decodes when asked, are what decoding the whole file gives; every line of the committed
// data takes the scan (not the fallback).
func TestDecodeIsTheWholeDecode(t *testing.T) {
	types, byField, byDoc := eager(t, []byte(data))
	s, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "k8s.io/api v0.37.2" || len(s.lines) != len(types) || len(types) < 400 {
		t.Fatalf("source %q, %d lines for %d types", s.Source, len(s.lines), len(types))
	}
	if !reflect.DeepEqual(s.byField, byField) || !reflect.DeepEqual(s.byDoc, byDoc) || len(byDoc) < 10 {
		t.Errorf("the scanned index differs from the decoded one")
	}
	for _, want := range types {
		if _, ok := scan(s.lines[want.Key], nil); !ok || s.fields[want.Key] != len(want.Fields) {
			t.Errorf("%s: its line is not in Encode's form (scanned %v), or %d fields counted", want.Key, ok, s.fields[want.Key])
		}
		got := s.Type(want.Key)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, want %+v", want.Key, got, want)
			continue
		}
		if s.Type(want.Key) != got {
			t.Errorf("%s: decoded twice", want.Key)
		}
		for i := range want.Fields {
			if f := s.Field(got, want.Fields[i].JSON); f != &got.Fields[i] {
				t.Errorf("%s.%s: field %v", want.Key, want.Fields[i].JSON, f)
			}
		}
	}
	if s.Type("core/v1.NoSuchType") != nil {
		t.Errorf("an unknown key has a type")
	}
}

// TestDecodeOtherForms: a line in another form than Encode's (spaces, keys in another order,
// no fields, escapes) is decoded whole for its index; a file not in Encode's form is an error.
func TestDecodeOtherForms(t *testing.T) {
	file := func(lines ...string) string {
		return "{\"source\": \"test\", \"types\": [\n" + strings.Join(lines, ",\n") + "\n]}\n"
	}
	good := file(
		`{"key":"a/v1.A","name":"A","fields":[{"json":"x","shape":{"kind":"string"},"default":{"json":"}\"]"}},{"json":"y","shape":{"kind":"object","ref":"a/v1.B"}}]}`,
		`{ "name": "B", "key": "a/v1.B", "fields": [ {"shape": {"kind": "integer"}, "json": "x"} ] }`,
		`{"key":"a/v1.C","name":"C","fields":null,"root":true}`,
		`{"key":"a/v1.D","name":"D","fields":[{"json":"z\u0041","shape":{"kind":"any"}}],"inline":true}`,
		`{"key":"a/v1.E","name":"E","fields":[{"json":"x","shape":{"kind":"boolean"}}],"inline":true,"root":true}`,
		`{"key":"a/v1.F","name":"F","fields":[{"json":"name","shape":{"kind":"string"}}],"mapType":"atomic","doc":"F is \"quoted\", {braced} and [listed]."}`,
	)
	types, byField, byDoc := eager(t, []byte(good))
	s, err := Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.byField, byField) || !reflect.DeepEqual(byField, map[string][]string{"x": {"a/v1.A", "a/v1.B"}, "y": {"a/v1.A"}, "name": {"a/v1.F"}}) {
		t.Errorf("index %v, want %v", s.byField, byField)
	}
	if !reflect.DeepEqual(s.byDoc, byDoc) || !reflect.DeepEqual(byDoc, map[string][]string{`F is "quoted", {braced} and [listed].`: {"a/v1.F"}}) {
		t.Errorf("fingerprints %v, want %v", s.byDoc, byDoc)
	}
	// A (a default holding brackets and quotes), C, E and F are in Encode's form; B has spaces
	// and another order, D an escape in a field's name.
	for i, want := range types {
		if got := s.Type(want.Key); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", want.Key, got, want)
		}
		if _, ok := scan(s.lines[want.Key], nil); ok != (i%2 == 0 || want.Key == "a/v1.F") {
			t.Errorf("%s: scanned %v", want.Key, ok)
		}
	}
	for _, line := range []string{`{"key":"a/v1.A","name":"A","fields":[]}`, `{"key":"a/v1.A","name":"A","fields":[{"json":"x","shape":{"kind":"string"}}],"inline":true}`} {
		if _, ok := scan(line, nil); !ok {
			t.Errorf("%s: not scanned", line)
		}
	}
	for name, b := range map[string]string{
		"no header":     `{"types": []}`,
		"a broken line": file(`{"key":"a/v1.A","name":"A","fields":[{"json":"x"`),
		"a key twice":   file(`{"key":"a/v1.A","name":"A","fields":null}`, `{"key":"a/v1.A","name":"A2","fields":null}`),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if enc, err := (&Set{Source: "test", Types: types[:1]}).Encode(); err != nil || !bytes.HasPrefix(enc, []byte("{\"source\": \"test\", \"types\": [\n{\"key\":\"a/v1.A\"")) {
		t.Errorf("Encode: %s %v", enc, err)
	}
}

// TestDecodeCopiesNoText: the index refers to the embedded data's own text, its keys, lines
// and field names, instead of copies of it (a copy of each was half of what Decode allocated,
// in every run that names a finding after a built-in type).
func TestDecodeCopiesNoText(t *testing.T) {
	s, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	lo := uintptr(unsafe.Pointer(unsafe.StringData(data)))
	inData := func(str string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(str)))
		return p >= lo && p+uintptr(len(str)) <= lo+uintptr(len(data))
	}
	for key, line := range s.lines {
		if !inData(key) || !inData(line) {
			t.Fatalf("%s: its key or line is a copy", key)
		}
	}
	for name, keys := range s.byField {
		if !inData(name) || !inData(keys[0]) {
			t.Fatalf("%s: the field name or its first type's key is a copy", name)
		}
	}
	if len(s.lines) < 400 || len(s.byField) < 400 {
		t.Fatalf("%d lines, %d field names", len(s.lines), len(s.byField))
	}
}

// TestRecognitionDecodesOnlyNamedTypes: a type is decoded to be tried only when the index says
// it has every property of the node. A node whose properties no one type has together (a
// project's type with a container's image and name and a deployment's replicas) decodes only
// the type extended recognition tries, the one naming most of them (it decoded seven); a
// ContainerPort decodes ContainerPort.
func TestRecognitionDecodesOnlyNamedTypes(t *testing.T) {
	s, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	decoded := func() []string { return slices.Sorted(maps.Keys(s.byKey)) }
	str := apiextv1.JSONSchemaProps{Type: "string"}
	mixed := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"image": str, "replicas": {Type: "integer"}, "name": str,
	}}
	if p := s.Standalone(mixed); p.Known() || !slices.Equal(decoded(), []string{"core/v1.ContainerStatus"}) {
		t.Errorf("recognised as %+v, decoded %v", p.Shape, decoded())
	}
	port := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"containerPort": {Type: "integer"}, "name": str, "protocol": str,
	}}
	if p := s.Standalone(port); !p.Known() || p.Shape.Ref != "core/v1.ContainerPort" || !slices.Equal(decoded(), []string{"core/v1.ContainerPort", "core/v1.ContainerStatus"}) {
		t.Errorf("recognised as %+v, decoded %v", p.Shape, decoded())
	}
}
