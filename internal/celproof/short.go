package celproof

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// maxShort bounds the one-line form of an example; longer ones end in "…".
const maxShort = 160

// Short renders a witness on one line in YAML flow style, without the apiVersion, kind and
// metadata every object carries: {spec: {name: a, matchLabels: {}}}.
func Short(obj map[string]any) string {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			rest[k] = v
		}
	}
	if m, ok := obj["metadata"].(map[string]any); ok && m["name"] != "example" {
		rest["metadata"] = m
	}
	var b strings.Builder
	flow(&b, rest)
	s := b.String()
	if r := []rune(s); len(r) > maxShort {
		s = string(r[:maxShort-1]) + "…"
	}
	return s
}

var plainScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// reserved are plain words YAML would read as something other than a string.
var reserved = map[string]bool{"true": true, "false": true, "null": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true, "True": true, "False": true, "Null": true, "NULL": true, "TRUE": true, "FALSE": true, "Yes": true, "No": true, "On": true, "Off": true, "YES": true, "NO": true, "ON": true, "OFF": true, "Y": true, "N": true}

func flow(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			flow(b, k)
			b.WriteString(": ")
			flow(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			flow(b, e)
		}
		b.WriteByte(']')
	case string:
		if plainScalar.MatchString(x) && !reserved[x] {
			b.WriteString(x)
		} else {
			q, _ := json.Marshal(x)
			b.Write(q)
		}
	case nil:
		b.WriteString("null")
	default:
		fmt.Fprint(b, x)
	}
}
