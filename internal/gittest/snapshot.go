package gittest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Snapshot records every file under dir (a .git folder): its mode and a hash of its content.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = fmt.Sprintf("%v %x", info.Mode(), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// AssertUntouched fails when anything under dir differs from before: a file added (a fetched
// pack, a refs/crdguard ref), removed, rewritten (.git/shallow) or given another mode. crdguard
// runs as root in the action; whatever it wrote into .git would break the job's later git steps.
func AssertUntouched(t testing.TB, dir string, before map[string]string) {
	t.Helper()
	after := Snapshot(t, dir)
	for p, v := range after {
		if before[p] != v {
			t.Errorf("%s was written: %s (was %q)", filepath.Join(dir, p), v, before[p])
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", filepath.Join(dir, p))
		}
	}
}
