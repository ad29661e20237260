package source

import (
	"bytes"
	"strings"
	"testing"
)

// readSized reads exactly the content, whatever the size it was told: a size that is right, one
// that is short or long (the content decides), and content over the cap (cut one byte past it,
// so that the caller notices).
func TestReadSized(t *testing.T) {
	content := strings.Repeat("kind: CustomResourceDefinition\n", 100)
	for _, tc := range []struct {
		name    string
		content string
		size    int64
		want    int
	}{
		{"exact size", content, int64(len(content)), len(content)},
		{"size too small", content, 10, len(content)},
		{"size zero", content, 0, len(content)},
		{"size too large", content, int64(len(content)) * 3, len(content)},
		{"empty", "", 0, 0},
		{"oversized, size known", strings.Repeat("x", MaxFileSize+10), MaxFileSize + 10, MaxFileSize + 1},
		{"oversized, size short", strings.Repeat("x", MaxFileSize+10), 5, MaxFileSize + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSized("f.yaml", strings.NewReader(tc.content), tc.size)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want || !bytes.Equal(got, []byte(tc.content[:tc.want])) {
				t.Errorf("read %d bytes, want the first %d of the content", len(got), tc.want)
			}
		})
	}
}
