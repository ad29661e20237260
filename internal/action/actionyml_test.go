package action

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"go.yaml.in/yaml/v3"
)

func githubactionsFor(getenv func(string) string) *githubactions.Action {
	return githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard))
}

// actionMetadata is action.yml as the runner reads it; unknown keys are errors.
type actionMetadata struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
		Required    bool    `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using          string `yaml:"using"`
		Image          string `yaml:"image"`
		PostEntrypoint string `yaml:"post-entrypoint"`
	} `yaml:"runs"`
}

// action.yml parses strictly (the runner refuses the whole action over one bad scalar), and its
// inputs and outputs are exactly those the action reads and writes, with the defaults the code
// applies when an input is empty.
func TestActionYAMLMatchesTheCode(t *testing.T) {
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var meta actionMetadata
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&meta); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	// The post step runs the image's binary without arguments: main.go then runs the action.
	if meta.Runs.Using != "docker" || meta.Runs.Image == "" || meta.Runs.PostEntrypoint != "/crdguard" || meta.Name == "" || meta.Description == "" {
		t.Fatalf("action.yml: runs %+v, name %q", meta.Runs, meta.Name)
	}

	// What one run reads and writes.
	pr := newPullRequest(t)
	var read []string
	getenv := func(k string) string {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok && !slices.Contains(read, name) {
			read = append(read, name)
		}
		return pr.env[k]
	}
	pr.getenv = getenv
	if code, out := pr.run(); code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	pr.completed(pr.head)
	var declared []string
	for name, in := range meta.Inputs {
		declared = append(declared, strings.ToUpper(name))
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	sort.Strings(read)
	sort.Strings(declared)
	if !slices.Equal(read, declared) {
		t.Errorf("inputs read %v, action.yml declares %v", read, declared)
	}
	var written []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z-]+)<<`).FindAllStringSubmatch(readFile(t, pr.env["GITHUB_OUTPUT"]), -1) {
		written = append(written, m[1])
	}
	var outputs []string
	for name := range meta.Outputs {
		outputs = append(outputs, name)
	}
	sort.Strings(written)
	sort.Strings(outputs)
	if !slices.Equal(written, outputs) {
		t.Errorf("outputs written %v, action.yml declares %v", written, outputs)
	}

	// An input set to its action.yml default behaves as the code's own default.
	in, err := readInputs(githubactionsFor(func(string) string { return "" }))
	if err != nil {
		t.Fatal(err)
	}
	withDefaults, err := readInputs(githubactionsFor(func(k string) string {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			if d := meta.Inputs[strings.ToLower(name)].Default; d != nil && !strings.Contains(*d, "${{") {
				return *d
			}
		}
		return ""
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, withDefaults) {
		t.Errorf("action.yml defaults give %+v, the code's %+v", withDefaults, in)
	}
}
