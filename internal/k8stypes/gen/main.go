// Command gen writes internal/k8stypes/types.json from the k8s.io/api and k8s.io/apimachinery
// sources in the module cache, at the versions go.mod requires (`go generate ./internal/k8stypes`).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/gotypes"
	"github.com/crdguard/crdguard/internal/k8stypes"
)

// packages are the API packages whose types CRDs embed, below k8s.io/api. The types of
// k8s.io/apimachinery's meta/v1 they use (ObjectMeta, LabelSelector) come with them; the rest
// of meta/v1 (Status, StatusDetails, APIResource) is no part of any object a CRD embeds.
var packages = []string{
	"k8s.io/api/core/v1", "k8s.io/api/apps/v1", "k8s.io/api/batch/v1", "k8s.io/api/autoscaling/v1",
	"k8s.io/api/autoscaling/v2", "k8s.io/api/networking/v1", "k8s.io/api/policy/v1", "k8s.io/api/rbac/v1",
	"k8s.io/api/storage/v1",
}

// imported are the other packages the types use, read only for the types they name.
var imported = []string{"k8s.io/apimachinery/pkg/apis/meta/v1"}

func main() {
	out := flag.String("o", "types.json", "the file to write")
	flag.Parse()
	data, err := Generate()
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// module is a module of the build: its path, version and folder in the module cache.
type module struct{ Path, Version, Dir string }

// Generate reads the packages from the module cache and returns the data file's content.
func Generate() ([]byte, error) {
	cmd := exec.Command("go", "list", "-m", "-json", "k8s.io/api", "k8s.io/apimachinery")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m k8s.io/api k8s.io/apimachinery: %w", err)
	}
	var mods []module
	for dec := json.NewDecoder(bytes.NewReader(raw)); dec.More(); {
		var m module
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		if m.Dir == "" {
			return nil, fmt.Errorf("%s %s is not in the module cache (go mod download)", m.Path, m.Version)
		}
		mods = append(mods, m)
	}
	t, err := readTree(mods)
	if err != nil {
		return nil, err
	}
	types, err := gotypes.Describe(t, packages, func(dir string) string {
		return strings.TrimPrefix(strings.TrimPrefix(dir, "k8s.io/api/"), "k8s.io/apimachinery/pkg/apis/")
	})
	if err != nil {
		return nil, err
	}
	types, err = withRemoved(types)
	if err != nil {
		return nil, err
	}
	s := &k8stypes.Set{Types: types}
	for _, m := range mods {
		if m.Path == "k8s.io/api" {
			s.Source = m.Path + " " + m.Version
		}
	}
	return s.Encode()
}

// tree is the Go files of the packages, and the modules' go.mod files, named by import path.
type tree map[string]string // name → file on disk

func (t tree) Names() []string {
	out := make([]string, 0, len(t))
	for n := range t {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (t tree) Read(name string) ([]byte, error) { return os.ReadFile(t[name]) }

// readTree lists the files of every package below the modules' folders that the listed
// packages may use (all of k8s.io/apimachinery's pkg/apis/meta/v1, api/resource, util/intstr,
// runtime are named by import path; only Go files of the listed packages and the go.mod files
// are read).
func readTree(mods []module) (tree, error) {
	t := tree{}
	for _, m := range mods {
		t[m.Path+"/go.mod"] = filepath.Join(m.Dir, "go.mod")
	}
	for _, p := range append(append([]string{}, packages...), imported...) {
		var dir string
		for _, m := range mods {
			if rest, ok := strings.CutPrefix(p, m.Path+"/"); ok {
				dir = filepath.Join(m.Dir, filepath.FromSlash(rest))
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				t[path.Join(p, e.Name())] = filepath.Join(dir, e.Name())
			}
		}
	}
	return t, nil
}

// removedField is a field k8s.io/api no longer has, with the shape it had.
type removedField struct {
	owner string         // the type that had it
	field k8stypes.Field // Removed: the first k8s.io/api version without it
	types []*k8stypes.Type
}

// removed are the fields of the listed packages that k8s.io/api removed while CRDs generated
// from the versions before are still about, with the types they used: a PodSpec generated from
// k8s.io/api v0.30 has resourceClaims[*].source, and is still a PodSpec (kuberay v1.2.0 is; its
// imagePullSecrets defaults were errors because of it). Taken from the k8s.io/api v0.31.0
// release (DRA structured parameters: PodResourceClaim's source flattened into it); the
// generator reads one version, so a removal is added here by hand when it shows.
var removed = []removedField{{
	owner: "core/v1.PodResourceClaim",
	field: k8stypes.Field{JSON: "source", Shape: k8stypes.Shape{Kind: k8stypes.KindObject, Ref: "core/v1.ClaimSource"}, Removed: "v0.31.0"},
	types: []*k8stypes.Type{{Key: "core/v1.ClaimSource", Name: "ClaimSource", Fields: []k8stypes.Field{
		{JSON: "resourceClaimName", Shape: k8stypes.Shape{Kind: k8stypes.KindString}},
		{JSON: "resourceClaimTemplateName", Shape: k8stypes.Shape{Kind: k8stypes.KindString}},
	}}},
}}

// withRemoved adds the removed fields to their types, and the types they used that k8s.io/api
// no longer has. A removed field the type has again, or a type that exists, is an error: the
// list is stale.
func withRemoved(types []*k8stypes.Type) ([]*k8stypes.Type, error) {
	byKey := map[string]*k8stypes.Type{}
	for _, t := range types {
		byKey[t.Key] = t
	}
	for _, r := range removed {
		t := byKey[r.owner]
		if t == nil {
			return nil, fmt.Errorf("removed field %s.%s: no type %s", r.owner, r.field.JSON, r.owner)
		}
		for _, f := range t.Fields {
			if f.JSON == r.field.JSON {
				return nil, fmt.Errorf("removed field %s.%s is a field again: drop it from the list", r.owner, r.field.JSON)
			}
		}
		t.Fields = append(t.Fields, r.field)
		for _, rt := range r.types {
			if byKey[rt.Key] != nil {
				return nil, fmt.Errorf("removed type %s exists again: drop it from the list", rt.Key)
			}
			byKey[rt.Key] = rt
			types = append(types, rt)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i].Key < types[j].Key })
	return types, nil
}
