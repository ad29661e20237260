package source

import (
	"bytes"
	"path"
	"slices"
	"sort"
)

// Rename pairing is git's diffcore-rename for `git diff -M`, which GitHub's pull request diff
// uses too: review comments can only be placed on the files GitHub pairs, so crdguard pairs
// exactly as git does, not as go-git does (60 % similarity, a name bonus, no basename step).

// RenameScore is git's default minimum similarity, in percent, for a deleted and an added file
// to count as one file moved.
const RenameScore = 50

// RenameLimit is git's default diff.renameLimit: when more deleted × added files than its
// square remain after exact and basename matches, git pairs only those, and so does crdguard.
const RenameLimit = 1000

// maxScore is git's similarity scale (MAX_SCORE).
const maxScore = 60000

// Blob is one file on one side of a change, for rename pairing.
type Blob struct {
	Path string
	Data []byte
}

// Rename pairs Deleted[From] with Added[To]; Score is their similarity in percent.
type Rename struct {
	From, To, Score int
}

// Renames pairs deleted files with added ones as `git diff -M` does: identical contents first
// (preferring the same file name), then files whose name is unique on both sides and that are
// 75 % similar, then the most similar pairs above RenameScore. Inexact pairing is skipped, as git
// skips it, when too many files remain (RenameLimit); complete is false then. Callers pass only
// the files that can matter (manifests under the configured paths), so nothing else is read.
func Renames(deleted, added []Blob) (renames []Rename, complete bool) {
	srcUsed := make([]bool, len(deleted))
	dstUsed := make([]bool, len(added))
	record := func(src, dst, score int) {
		srcUsed[src], dstUsed[dst] = true, true
		renames = append(renames, Rename{From: src, To: dst, Score: score * 100 / maxScore})
	}
	exactRenames(deleted, added, srcUsed, record)

	minScore := RenameScore * maxScore / 100
	sigs := make(map[int]*spanSig) // keyed by src index, and by -1-dst for destinations
	sig := func(key int, data []byte) *spanSig {
		if s, ok := sigs[key]; ok {
			return s
		}
		s := newSpanSig(data)
		sigs[key] = s
		return s
	}
	similarity := func(src, dst, bar int) int {
		a, b := deleted[src].Data, added[dst].Data
		maxSize, baseSize := max(len(a), len(b)), min(len(a), len(b))
		if maxSize*(maxScore-bar) < (maxSize-baseSize)*maxScore {
			return 0 // sizes too different: git does not even read the contents
		}
		if len(b) == 0 {
			return 0
		}
		return sig(src, a).copied(sig(-1-dst, b)) * maxScore / maxSize
	}

	// Files whose base name is unique among the remaining deleted and among the remaining added
	// files pair first, at a higher bar (git's find_basename_matches).
	minBasename := minScore + (maxScore-minScore)/2
	srcByBase := uniqueBasenames(deleted, srcUsed)
	dstByBase := uniqueBasenames(added, dstUsed)
	for i := range deleted {
		if srcUsed[i] {
			continue
		}
		base := path.Base(deleted[i].Path)
		d, ok := dstByBase[base]
		if srcByBase[base] != i || !ok || d < 0 || dstUsed[d] {
			continue
		}
		if score := similarity(i, d, minBasename); score >= minBasename {
			record(i, d, score)
		}
	}

	var srcs, dsts []int
	for i, used := range srcUsed {
		if !used {
			srcs = append(srcs, i)
		}
	}
	for i, used := range dstUsed {
		if !used {
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return renames, true
	}
	if (len(dsts) > RenameLimit && len(srcs) > RenameLimit) || len(dsts)*len(srcs) > RenameLimit*RenameLimit {
		return renames, false
	}
	// Each added file keeps its four best candidates (NUM_CANDIDATE_PER_DST); all candidates
	// are then taken best first.
	type cand struct{ score, sameName, src, dst int }
	better := func(a, b cand) bool { // a sorts before b
		if a.score != b.score {
			return a.score > b.score
		}
		return a.sameName > b.sameName
	}
	var all []cand
	for _, d := range dsts {
		var top []cand
		for _, s := range srcs {
			c := cand{score: similarity(s, d, minScore), src: s, dst: d}
			if path.Base(deleted[s].Path) == path.Base(added[d].Path) {
				c.sameName = 1
			}
			if len(top) < 4 {
				top = append(top, c)
				continue
			}
			worst := 0
			for k := 1; k < len(top); k++ {
				if better(top[worst], top[k]) {
					worst = k
				}
			}
			if better(c, top[worst]) {
				top[worst] = c
			}
		}
		all = append(all, top...)
	}
	sort.SliceStable(all, func(i, j int) bool { return better(all[i], all[j]) })
	for _, c := range all {
		if c.score < minScore {
			break
		}
		if dstUsed[c.dst] || srcUsed[c.src] {
			continue
		}
		record(c.src, c.dst, c.score)
	}
	return renames, true
}

// exactRenames pairs identical contents: for each added file, the first unused deleted file
// with the same content, preferring one with the same base name (git's find_identical_files).
func exactRenames(deleted, added []Blob, srcUsed []bool, record func(src, dst, score int)) {
	byContent := map[string][]int{}
	for i, b := range deleted {
		byContent[string(b.Data)] = append(byContent[string(b.Data)], i)
	}
	for d, b := range added {
		best, bestScore := -1, -1
		for n, s := range byContent[string(b.Data)] {
			if n == 100 { // git: too many identical alternatives, pick one
				break
			}
			if srcUsed[s] {
				continue
			}
			score := 1
			if path.Base(deleted[s].Path) == path.Base(b.Path) {
				score++
			}
			if score > bestScore {
				best, bestScore = s, score
				if score == 2 {
					break
				}
			}
		}
		if best >= 0 {
			record(best, d, maxScore)
		}
	}
}

// uniqueBasenames maps each base name held by exactly one unused file to its index, and base
// names held by several to -1.
func uniqueBasenames(files []Blob, used []bool) map[string]int {
	m := map[string]int{}
	for i, f := range files {
		if used[i] {
			continue
		}
		base := path.Base(f.Path)
		if _, seen := m[base]; seen {
			m[base] = -1
		} else {
			m[base] = i
		}
	}
	return m
}

// spanSig is git's similarity fingerprint of a file (diffcore-delta.c): the file is cut into
// chunks ending at a newline or after 64 bytes, and each chunk's hash counts its bytes.
type spanSig struct {
	hashes []uint32 // sorted
	counts []int
}

// spanHashBase is git's HASHBASE, a prime that keeps the hash table small; chunks that collide
// count as equal, as in git.
const spanHashBase = 107927

func newSpanSig(data []byte) *spanSig {
	text := bytes.IndexByte(data[:min(len(data), 8000)], 0) < 0 // git's buffer_is_binary
	counts := map[uint32]int{}
	var accum1, accum2 uint32
	n := 0
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue // CRLF counts as LF in text
		}
		old1 := accum1
		accum1 = (accum1 << 7) ^ (accum2 >> 25)
		accum2 = (accum2 << 7) ^ (old1 >> 25)
		accum1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		counts[(accum1+accum2*0x61)%spanHashBase] += n
		n, accum1, accum2 = 0, 0, 0
	}
	// As in git, a last chunk without a newline is not counted.
	s := &spanSig{hashes: make([]uint32, 0, len(counts))}
	for h := range counts {
		s.hashes = append(s.hashes, h)
	}
	slices.Sort(s.hashes)
	s.counts = make([]int, len(s.hashes))
	for i, h := range s.hashes {
		s.counts[i] = counts[h]
	}
	return s
}

// copied is how many bytes of dst come from src: per chunk hash, the smaller of the two counts.
func (src *spanSig) copied(dst *spanSig) int {
	total, j := 0, 0
	for i, h := range src.hashes {
		for j < len(dst.hashes) && dst.hashes[j] < h {
			j++
		}
		if j < len(dst.hashes) && dst.hashes[j] == h {
			total += min(src.counts[i], dst.counts[j])
		}
	}
	return total
}
