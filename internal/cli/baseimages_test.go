package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// from is one FROM line of a Dockerfile: its flags, image and stage name.
type from struct {
	flags        []string
	image, stage string
}

// froms reads a Dockerfile's FROM lines.
func froms(text string) []from {
	var out []from
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.EqualFold(f[0], "FROM") {
			continue
		}
		var fr from
		i := 1
		for ; i < len(f) && strings.HasPrefix(f[i], "--"); i++ {
			fr.flags = append(fr.flags, f[i])
		}
		if i < len(f) {
			fr.image = f[i]
		}
		if i+2 < len(f) && strings.EqualFold(f[i+1], "AS") {
			fr.stage = f[i+2]
		}
		out = append(out, fr)
	}
	return out
}

// pinned is an image pinned by digest, with or without its tag.
var pinned = regexp.MustCompile(`^[a-z0-9][a-z0-9./_-]*(:[\w][\w.-]*)?@sha256:[0-9a-f]{64}$`)

// TestBaseImagesPinned: every FROM of both Dockerfiles pins its image by digest (a tag can be
// moved to other content; the digest is what was reviewed), the build stage runs on the
// builder's platform (--platform=$BUILDPLATFORM: Go cross-compiles, nothing is emulated), and
// the release image has the test image's runtime base. Whether each digest is an image index with
// linux/amd64 and linux/arm64 only the registries can say: CI's base-images job asks them
// (.ci/base-images.sh, tested below with a stand-in registry).
func TestBaseImagesPinned(t *testing.T) {
	var runtimes []string
	for _, name := range []string{"Dockerfile", "Dockerfile.release"} {
		fs := froms(readFile(t, "../../"+name))
		if len(fs) == 0 {
			t.Fatalf("%s has no FROM", name)
		}
		stages := []string{}
		for _, f := range fs {
			if !slices.Contains(stages, f.image) && !pinned.MatchString(f.image) {
				t.Errorf("%s: FROM %s is not pinned by digest (name:tag@sha256:…)", name, f.image)
			}
			if f.stage != "" {
				stages = append(stages, f.stage)
				if !slices.Equal(f.flags, []string{"--platform=$BUILDPLATFORM"}) {
					t.Errorf("%s: the build stage %s runs with %q, not --platform=$BUILDPLATFORM", name, f.stage, f.flags)
				}
			}
		}
		runtimes = append(runtimes, fs[len(fs)-1].image)
	}
	if runtimes[0] != runtimes[1] {
		t.Errorf("runtime bases differ: Dockerfile %s, Dockerfile.release %s", runtimes[0], runtimes[1])
	}
	if got := froms("FROM golang:1.26-bookworm AS build\nFROM --platform=$BUILDPLATFORM x@sha256:abc\n"); pinned.MatchString(got[0].image) || pinned.MatchString(got[1].image) {
		t.Error("an image without a digest, or with a short one, counts as pinned")
	}
}

// TestBaseImagesScript runs CI's base-images check against a stand-in `docker` that serves
// what a registry would for each digest: an index with both platforms passes; a single-platform
// manifest, an index without arm64 and an unpinned FROM fail, each with its reason.
func TestBaseImagesScript(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is needed to run .ci/base-images.sh", tool)
		}
	}
	script, err := filepath.Abs("../../.ci/base-images.sh")
	if err != nil {
		t.Fatal(err)
	}
	const (
		index   = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"platform":{"os":"linux","architecture":"amd64"}},{"platform":{"os":"linux","architecture":"arm64","variant":"v8"}},{"platform":{"os":"unknown","architecture":"unknown"}}]}`
		amd64   = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"platform":{"os":"linux","architecture":"amd64"}}]}`
		single  = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{},"layers":[]}`
		digestA = "sha256:" + "a1" + "00000000000000000000000000000000000000000000000000000000000000"
		digestB = "sha256:" + "b2" + "00000000000000000000000000000000000000000000000000000000000000"
		digestC = "sha256:" + "c3" + "00000000000000000000000000000000000000000000000000000000000000"
	)
	dir := t.TempDir()
	registry := map[string]string{"golang:1.26@" + digestA: index, "static:1@" + digestB: single, "static:1@" + digestC: amd64, "static:2@" + digestA: index}
	var stub strings.Builder
	stub.WriteString("#!/bin/sh\n# docker buildx imagetools inspect --raw IMAGE\ncase \"$5\" in\n")
	for image, raw := range registry {
		stub.WriteString("'" + image + "') echo '" + raw + "' ;;\n")
	}
	stub.WriteString("*) echo \"ERROR: $5: not found\" >&2; exit 1 ;;\nesac\n")
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(stub.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dockerfile string
		ok               bool
		stderr           string
	}{
		{"an index with both platforms", "FROM --platform=$BUILDPLATFORM golang:1.26@" + digestA + " AS build\nFROM static:2@" + digestA + "\nCOPY --from=build /x /x\n", true, ""},
		{"a later stage built on an earlier one", "FROM golang:1.26@" + digestA + " AS build\nFROM build AS test\nFROM scratch\n", true, ""},
		{"a single-platform manifest", "FROM static:1@" + digestB + "\n", false,
			"Dockerfile: FROM static:1@" + digestB + " is not an image index with linux/amd64 and linux/arm64 (a single-platform manifest's digest pins one architecture: use the index digest, as `docker buildx imagetools inspect name:tag` prints it)\n"},
		{"an index without arm64", "FROM static:1@" + digestC + "\n", false,
			"Dockerfile: FROM static:1@" + digestC + " is not an image index with linux/amd64 and linux/arm64 (a single-platform manifest's digest pins one architecture: use the index digest, as `docker buildx imagetools inspect name:tag` prints it)\n"},
		{"a tag only", "FROM golang:1.26-bookworm AS build\n", false,
			"Dockerfile: FROM golang:1.26-bookworm is not pinned by digest (write it as name:tag@sha256:<the index digest>)\n"},
		{"a digest the registry does not serve", "FROM static:3@" + digestA + "\n", false,
			"ERROR: static:3@" + digestA + ": not found\nDockerfile: FROM static:3@" + digestA + ": the registry does not serve this digest\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "Dockerfile"), []byte(tc.dockerfile), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", script, "Dockerfile")
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if (err == nil) != tc.ok || stderr.String() != tc.stderr {
				t.Fatalf("err %v, stderr\n%s\nwant\n%s", err, stderr.String(), tc.stderr)
			}
		})
	}
}
