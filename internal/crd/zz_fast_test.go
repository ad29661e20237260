package crd

import (
	"os"
	"testing"
)

func TestZZFast(t *testing.T) {
	data, _ := os.ReadFile("/tmp/gw-big.yaml")
	docs, ok := parseFast(data)
	t.Logf("ok=%v docs=%d", ok, len(docs))
	if !ok {
		// find the first failing doc by bisecting on '---'
		parts := splitDocs(data)
		for i, p := range parts {
			if _, ok := parseFast(p); !ok {
				t.Logf("doc %d fails: %q", i, string(p[:min(len(p), 300)]))
				break
			}
		}
	}
}

func splitDocs(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i+4 <= len(data); i++ {
		if (i == 0 || data[i-1] == '\n') && string(data[i:i+4]) == "---\n" {
			if i > start {
				out = append(out, data[start:i])
			}
			start = i
		}
	}
	return append(out, data[start:])
}
