package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/crdguard/crdguard/internal/crd"
)

// LineError is a configuration problem at a line of the file.
type LineError struct {
	Line int
	Msg  string
}

// Error says the line and the problem: "line 3: paths must be a list of globs".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// shape is what a configuration key holds.
type shape int

const (
	text shape = iota
	boolean
	list
	mapping
	listOfMappings
	stabilityMap
	deliveryMap
	// helmList is helm: a list of chart settings (helmKeys).
	helmList
	// valueMap is helm set: Helm key paths to any YAML value.
	valueMap
	// setsMap is helm sets: value set names to their values and set (valueSetKeys).
	setsMap
)

// topKeys are the keys of .crdguard.yaml (DESIGN §4) and what each holds.
var topKeys = map[string]shape{
	"mode": text, "failMode": text, "ratcheting": boolean, "rules": mapping, "paths": list,
	"exclude": list, "samples": list, "baselines": list, "acknowledgeLabel": text, "ignore": listOfMappings,
	"kubernetesVersion": text, "stability": stabilityMap, "delivery": deliveryMap, "helm": helmList,
}

// deliveryKeys are the keys of delivery: the ways of delivering CRDs crdguard can be told of.
var deliveryKeys = map[string]shape{"olm": boolean}

// subMappings are the shapes that hold a mapping of known keys: the keys, and what the value
// must be when it is not a mapping.
var subMappings = map[shape]struct {
	keys map[string]shape
	want string
}{
	stabilityMap: {stabilityKeys, "a mapping of stabilities to severities, e.g. stability: {alpha: warning}"},
	deliveryMap:  {deliveryKeys, "a mapping, e.g. delivery: {olm: true}"},
}

// helmKeys are the keys of one helm: entry, valueSetKeys those of one named value set.
var (
	helmKeys     = map[string]shape{"chart": text, "values": list, "set": valueMap, "releaseName": text, "namespace": text, "sets": setsMap}
	valueSetKeys = map[string]shape{"values": list, "set": valueMap}
)

// ignoreKeys are the keys of one ignore entry.
var ignoreKeys = map[string]shape{"crd": text, "version": text, "path": text, "rule": text, "change": text, "expires": text, "reason": text}

// stabilityKeys are the keys of stability: the stabilities of Kubernetes version names.
var stabilityKeys = map[string]shape{"alpha": text, "beta": text, "stable": text}

// listExamples say what a list holds and show one, for "must be a list" errors.
var listExamples = map[string]string{
	"paths":     `globs, e.g. paths: ["config/crd/**"]`,
	"exclude":   `globs, e.g. exclude: ["**/testdata/**"]`,
	"samples":   `globs, e.g. samples: ["config/samples/**"]`,
	"baselines": `refs, e.g. baselines: [v1.4.0]`,
	"ignore":    "entries, each with crd, version, path, rule or change, and a reason",
	"helm":      "charts, e.g. helm: [{chart: charts/widgets, set: {crds.enabled: true}}]",
	"values":    `values files, e.g. values: [ci/values.yaml]`,
}

// checkShape walks the parsed document and reports, at its line and in the configuration's
// own words, the first unknown key (with the nearest known one) or value of the wrong kind. It
// records the line of every key and list item in lines ("mode", "rules.field-added",
// "ignore[0]", "paths[1]"), so later checks can name the line too.
func checkShape(doc *yaml.Node, lines map[string]int) error {
	if doc.Kind == 0 || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
		return nil // an empty file
	}
	root := doc
	if root.Kind == yaml.DocumentNode {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &LineError{root.Line, "the configuration must be a mapping of keys (mode, paths, rules, …)"}
	}
	return checkMapping(root, topKeys, "", lines)
}

func checkMapping(m *yaml.Node, keys map[string]shape, prefix string, lines map[string]int) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		want, ok := keys[name]
		if !ok {
			msg := "unknown key " + name
			if s := crd.Nearest(name, sortedKeys(keys)); s != "" {
				msg += " (did you mean " + s + "?)"
			} else {
				msg += " (known keys: " + strings.Join(sortedKeys(keys), ", ") + ")"
			}
			return &LineError{k.Line, msg}
		}
		lines[prefix+name] = k.Line
		if err := checkValue(prefix+name, v, want, lines); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(name string, v *yaml.Node, want shape, lines map[string]int) error {
	isNull := v.Kind == yaml.ScalarNode && v.Tag == "!!null"
	switch want {
	case text:
		if v.Kind != yaml.ScalarNode {
			return &LineError{v.Line, name + " must be a single value, not a list or mapping"}
		}
	case boolean:
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!bool" && !isNull) {
			return &LineError{v.Line, name + " must be true or false"}
		}
	case mapping:
		if isNull {
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return &LineError{v.Line, name + " must be a mapping of rule IDs to severities, e.g. rules: {description-changed: \"off\"}"}
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			lines[name+"."+k.Value] = k.Line
			if val.Kind != yaml.ScalarNode {
				return &LineError{val.Line, name + "." + k.Value + " must be a severity (error, warning, info or off)"}
			}
		}
	case stabilityMap, deliveryMap:
		if isNull {
			return nil
		}
		sub := subMappings[want]
		if v.Kind != yaml.MappingNode {
			return &LineError{v.Line, name + " must be " + sub.want}
		}
		return checkMapping(v, sub.keys, name+".", lines)
	case valueMap:
		if isNull {
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return &LineError{v.Line, name + " must be a mapping of Helm values by key, e.g. set: {crds.enabled: true}"}
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if k := v.Content[i]; k.Kind != yaml.ScalarNode || k.Value == "" {
				return &LineError{k.Line, name + " keys must be Helm value keys such as crds.enabled"}
			}
		}
	case setsMap:
		if isNull {
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return &LineError{v.Line, name + " must be a mapping of value set names to their values and set, e.g. sets: {crds-on: {set: {crds.enabled: true}}}"}
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			key := name + "." + k.Value
			lines[key] = k.Line
			if val.Kind != yaml.MappingNode {
				return &LineError{val.Line, key + " must be a mapping with values and set"}
			}
			if err := checkMapping(val, valueSetKeys, key+".", lines); err != nil {
				return err
			}
		}
	case list, listOfMappings, helmList:
		if isNull {
			return nil
		}
		if v.Kind != yaml.SequenceNode {
			return &LineError{v.Line, name + " must be a list of " + listExamples[lastKey(name)]}
		}
		for i, item := range v.Content {
			key := fmt.Sprintf("%s[%d]", name, i)
			lines[key] = item.Line
			if want == list && item.Kind != yaml.ScalarNode {
				return &LineError{item.Line, key + " must be a single value, not a list or mapping"}
			}
			if want == listOfMappings {
				if item.Kind != yaml.MappingNode {
					return &LineError{item.Line, key + " must be a mapping with crd, version, path, rule, change, expires and reason"}
				}
				if err := checkMapping(item, ignoreKeys, key+".", lines); err != nil {
					return err
				}
			}
			if want == helmList {
				if item.Kind != yaml.MappingNode {
					return &LineError{item.Line, key + " must be a mapping with chart and values, set, releaseName, namespace or sets"}
				}
				if err := checkMapping(item, helmKeys, key+".", lines); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lastKey is the last key of a dotted name (helm[0].values: values).
func lastKey(name string) string {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[i+1:]
	}
	return name
}

func sortedKeys(keys map[string]shape) []string {
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// atLine puts the line of a key in front of a configuration error, when it is known.
func (c *Config) atLine(key string, err error) error {
	if line, ok := c.lines[key]; ok {
		var le *LineError
		if !errors.As(err, &le) {
			return &LineError{line, err.Error()}
		}
	}
	return err
}
