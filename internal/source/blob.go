package source

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// eachFile calls fn with every file of tree (regular, executable or symlink), in path order:
// the one walk that every reader of a whole tree shares. An error from fn stops the walk.
func eachFile(tree *object.Tree, fn func(name string, entry object.TreeEntry) error) error {
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("walking tree: %w", err)
		}
		if !entry.Mode.IsFile() {
			continue
		}
		if err := fn(name, entry); err != nil {
			return err
		}
	}
}

// blobProblem says, in a problem's words, why a blob could not be read ("" when it could).
func blobProblem(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return "its content is missing from the repository (object not found), as in a partial or shallow clone"
	}
	return "its content could not be read: " + err.Error()
}

// readBlob reads at most MaxFileSize+1 bytes of a file, so an oversized one is noticed without
// being loaded whole.
func (r *Repo) readBlob(path string, e object.TreeEntry) ([]byte, error) {
	if e.Mode == filemode.Submodule || e.Mode == filemode.Symlink {
		return nil, nil
	}
	if r.blobReads != nil {
		r.readsMu.Lock()
		r.blobReads[path]++
		r.readsMu.Unlock()
	}
	blob, err := r.repo.BlobObject(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer rd.Close()
	return readSized(path, rd, blob.Size)
}

// readSized reads at most MaxFileSize+1 bytes of a content whose size is known into one buffer
// of that size, where reading to the end would grow one by doubling (twice the bytes copied and
// collected, on every file of every revision the history reads).
func readSized(path string, r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, min(max(size, 0), MaxFileSize)+1)
	n, err := io.ReadFull(r, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil // the usual end: one byte short of the buffer
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	case int64(n) > MaxFileSize:
		return data, nil // oversized: noticed without being read whole
	}
	// More than the size said: read on, as far as the cap.
	rest, err := readCapped(path, io.LimitReader(r, MaxFileSize+1-int64(n)))
	if err != nil {
		return nil, err
	}
	return append(data, rest...), nil
}
