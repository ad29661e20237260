package action

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeOwned writes a file for later steps: path is relative to the workspace unless absolute,
// folders are created, and the file is readable by all. A container action runs as root: what it
// creates inside the workspace is given to the workspace's owner, who must be able to remove it
// (the runner's next checkout cleans the workspace as that user).
func writeOwned(workspace, path string, data []byte) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(workspace, path)
	}
	var created []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
			break
		}
		created = append(created, dir)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// WriteFile keeps the mode of an existing file and the umask narrows a new one.
	if err := os.Chmod(path, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return giveTo(workspace, append(created, path))
}

// giveTo changes the owner of paths to the workspace's owner when running as root (inside the
// workspace only: an absolute path elsewhere keeps its owner).
func giveTo(workspace string, paths []string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	info, err := os.Stat(workspace)
	if err != nil {
		return fmt.Errorf("reading the owner of the workspace: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if p, err = filepath.Abs(p); err != nil {
			return err
		}
		if rel, err := filepath.Rel(ws, p); err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) > 2 && rel[:3] == "../" {
			continue
		}
		if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("giving %s to the workspace's owner: %w", p, err)
		}
	}
	return nil
}
