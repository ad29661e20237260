package regexlang

import (
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

var noBounds = Bounds{Max: -1}

func TestIncludes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		b        Bounds
		verdict  Verdict
		example  string // the first example, for Witness
	}{
		{"same", `^[a-z]+$`, `^[a-z]+$`, noBounds, Included, ""},
		{"typo class equal", `^[a-zA-Z0-9]([-a-zSA-Z0-9]*[a-zA-Z0-9])?$`, `^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`, noBounds, Included, ""},
		{"unanchored shorter loosens", `abc`, `ab`, noBounds, Included, ""},
		{"unanchored longer tightens", `ab`, `abc`, noBounds, Witness, "ab"},
		{"anchor added tightens", `abc`, `^abc$`, noBounds, Witness, "aabc"},
		{"anchor removed loosens", `^abc$`, `abc`, noBounds, Included, ""},
		{"begin anchor only", `^ab`, `^ab$`, noBounds, Witness, "aba"},
		{"alternative added", `^(rbd|cephfs|nfs)$`, `^(rbd|cephfs|nfs|nvmeof)$`, noBounds, Included, ""},
		{"alternative removed", `^(rbd|cephfs|nfs|nvmeof)$`, `^(rbd|cephfs|nfs)$`, noBounds, Witness, "nvmeof"},
		{"trailing dot allowed", `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$`, noBounds, Included, ""},
		{"trailing dot refused", `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$`, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, noBounds, Witness, "a."},
		{"any scheme", `^https?://[^/]+$`, `^[a-z][a-z0-9+.-]*://[^/]+$`, noBounds, Included, ""},
		{"only https", `^[a-z][a-z0-9+.-]*://[^/]+$`, `^https?://[^/]+$`, noBounds, Witness, "a://a"},
		{"bounded repetition", `^[a-z]+$`, `^[a-z]{1,8}$`, noBounds, Witness, "aaaaaaaaa"},
		{"within old maxLength", `^[a-z]+$`, `^[a-z]{1,8}$`, Bounds{Max: 8}, Included, ""},
		{"past old maxLength", `^[a-z]+$`, `^[a-z]{1,8}$`, Bounds{Max: 9}, Witness, "aaaaaaaaa"},
		{"old minLength", `^[a-z]+$`, `^[a-z]$|^[a-z]{3,}$`, Bounds{Min: 2, Max: -1}, Witness, "aa"},
		{"old minLength excludes", `^[a-z]+$`, `^[a-z]$|^[a-z]{3,}$`, Bounds{Min: 3, Max: -1}, Included, ""},
		{"bounds allow nothing", `a`, `b`, Bounds{Min: 3, Max: 2}, Included, ""},
		{"unicode letters widened", `^\p{Lu}+$`, `^\p{L}+$`, noBounds, Included, ""},
		{"unicode letters narrowed", `^\p{L}+$`, `^\p{Lu}+$`, noBounds, Witness, "a"},
		{"unicode classes, bounded repetition", `^[\p{L}\p{N}_-]{1,63}$`, `^[\p{L}\p{N}\p{M}_-]{1,253}$`, noBounds, Included, ""},
		{"greek only", `^\p{Greek}+$`, `^[a-z\p{Greek}]+$`, noBounds, Included, ""},
		{"non-ascii witness", `^\p{Greek}$`, `^[α-ω]$`, noBounds, Witness, "Ͱ"},
		{"dot excludes newline", `^.*$`, `^(?s:.*)$`, noBounds, Included, ""},
		{"dot with newline", `^(?s:.*)$`, `^.*$`, noBounds, Witness, "\n"},
		{"multiline", `^a$`, `(?m)^a$`, noBounds, Included, ""},
		{"multiline narrowed", `(?m)^a$`, `^a$`, noBounds, Witness, "a\n"},
		{"word boundary", `\bab\b`, `ab`, noBounds, Included, ""},
		{"word boundary added", `ab`, `\bab\b`, noBounds, Witness, "aab"},
		{"case folding", `^(?i)k$`, `^[kK\x{212A}]$`, noBounds, Included, ""},
		{"case folding narrowed", `^(?i)k$`, `^[kK]$`, noBounds, Witness, "\u212a"},
		{"cron letters", `^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$`, `^(\d+|\*|[A-Za-z]+)(/\d+)?(\s+(\d+|\*|[A-Za-z]+)(/\d+)?){4}$`, noBounds, Included, ""},
		{"cron letters removed", `^(\d+|\*|[A-Za-z]+)(/\d+)?(\s+(\d+|\*|[A-Za-z]+)(/\d+)?){4}$`, `^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$`, noBounds, Witness, "a a a a a"},
		{"empty new matches all", `^abc$`, ``, noBounds, Included, ""},
		{"empty old matches all", ``, `a`, noBounds, Witness, ""},
		{"old bad", `(`, `a`, noBounds, Undecided, ""},
		{"new bad", `a`, `[`, noBounds, Undecided, ""},
		{"too large", `^(a|b)*a(a|b){14}$`, `^(a|b)*b(a|b){14}$`, noBounds, Undecided, ""},
		{"large closures, bounded work", `^(.{0,100}){0,10}z$`, `^(.{0,100}){0,10}[yz]$`, noBounds, Undecided, ""},
		{"large closures, early witness", `^(.{0,100}){0,10}z$`, `^(.{0,100}){0,10}y$`, noBounds, Witness, "z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Helper()
			res := Includes(tc.old, tc.new, tc.b)
			if res.Verdict != tc.verdict {
				t.Fatalf("Includes(%q, %q, %+v) = %v %q %s, want %v", tc.old, tc.new, tc.b, res.Verdict, res.Examples, res.Why, tc.verdict)
			}
			if tc.verdict == Undecided && res.Why == "" {
				t.Errorf("undecided without a reason")
			}
			if tc.verdict != Witness {
				if len(res.Examples) != 0 {
					t.Errorf("examples %q for %v", res.Examples, res.Verdict)
				}
				return
			}
			if res.Examples[0] != tc.example {
				t.Errorf("first example %q, want %q (all: %q)", res.Examples[0], tc.example, res.Examples)
			}
			checkExamples(t, tc.old, tc.new, tc.b, res.Examples)
		})
	}
}

// checkExamples asserts that every example is a witness, as Go's regexp decides, within the
// bounds, and that the examples are distinct and shortest first.
func checkExamples(t *testing.T, old, new string, b Bounds, examples []string) {
	t.Helper()
	ro, rn := regexp.MustCompile(old), regexp.MustCompile(new)
	for i, ex := range examples {
		n := utf8.RuneCountInString(ex)
		if !ro.MatchString(ex) || rn.MatchString(ex) || n < b.Min || b.Max >= 0 && n > b.Max {
			t.Errorf("example %q is not a witness for %q → %q within %+v", ex, old, new, b)
		}
		if i > 0 && utf8.RuneCountInString(examples[i-1]) > n {
			t.Errorf("examples not shortest first: %q", examples)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(examples)))) != len(examples) {
		t.Errorf("repeated examples: %q", examples)
	}
}

// TestIncludesAgainstRegexp checks the verdicts against Go's regexp on every string of up to
// four runes over a small alphabet that tells the patterns' classes and contexts apart, without
// bounds and within lengths 2 to 3.
func TestIncludesAgainstRegexp(t *testing.T) {
	patterns := []string{``, `a`, `ab`, `^a`, `a$`, `^ab$`, `a+`, `^a*$`, `^a?b`, `(a|b)c`, `^[ab]+$`, `^[^a]*$`,
		`\ba`, `a\b`, `\Ba`, `(?m)^b`, `(?m)a$`, `(?i)A`, `.`, `^.$`, `(?s)^.$`, `^a{2,3}$`, `b.a`, `^(ab)*$`, `^\w+$`, `\s`, `^$`, `a|^b`}
	alphabet := []rune{'a', 'b', 'c', 'A', ' ', '\n', 'é'}
	var all []string
	var gen func(prefix []rune)
	gen = func(prefix []rune) {
		all = append(all, string(prefix))
		if len(prefix) == 4 {
			return
		}
		for _, r := range alphabet {
			gen(append(prefix, r))
		}
	}
	gen(nil)
	for _, b := range []Bounds{noBounds, {Min: 2, Max: 3}} {
		for _, old := range patterns {
			for _, new := range patterns {
				compareWithRegexp(t, old, nil, new, b, all)
			}
		}
	}
	// Old strings that must also match further patterns (what a format demands).
	for _, where := range [][]string{{`^[abc]*$`}, {`b`, `^[^\n]*$`}} {
		for _, old := range patterns {
			for _, new := range patterns {
				compareWithRegexp(t, old, where, new, noBounds, all)
			}
		}
	}
}

// compareWithRegexp checks IncludesWhere on one pair against Go's regexp on the strings given.
func compareWithRegexp(t *testing.T, old string, where []string, new string, b Bounds, all []string) {
	t.Helper()
	ro, rn := regexp.MustCompile(old), regexp.MustCompile(new)
	var rw []*regexp.Regexp
	for _, w := range where {
		rw = append(rw, regexp.MustCompile(w))
	}
	within := func(s string) bool {
		n := utf8.RuneCountInString(s)
		return ro.MatchString(s) && n >= b.Min && (b.Max < 0 || n <= b.Max) &&
			!slices.ContainsFunc(rw, func(r *regexp.Regexp) bool { return !r.MatchString(s) })
	}
	var counter string
	for _, s := range all {
		if within(s) && !rn.MatchString(s) {
			counter = s
			break
		}
	}
	res := IncludesWhere(old, where, new, b)
	switch {
	case res.Verdict == Undecided:
		t.Errorf("%q → %q undecided: %s", old, new, res.Why)
	case res.Verdict == Included && counter != "":
		t.Errorf("%q → %q within %+v where %q: included, but %q is matched by the old pattern only", old, new, b, where, counter)
	case res.Verdict == Witness:
		checkExamples(t, old, new, b, res.Examples)
		for _, ex := range res.Examples {
			if !within(ex) {
				t.Errorf("%q → %q where %q: example %q does not match every further pattern", old, new, where, ex)
			}
		}
		if counter != "" && utf8.RuneCountInString(counter) < utf8.RuneCountInString(res.Examples[0]) {
			t.Errorf("%q → %q: example %q is longer than %q", old, new, res.Examples[0], counter)
		}
	}
}

// TestPartition checks that the intervals cover every Unicode scalar value once, surrogates
// excluded, and split at the cuts.
func TestPartition(t *testing.T) {
	ivs := intervals([]rune{0xD700, 0xE100, 'x', 'x' + 1})
	total, next := 0, rune(0)
	for _, iv := range ivs {
		if iv.lo != next {
			t.Errorf("interval %x-%x does not start at %x", iv.lo, iv.hi, next)
		}
		if iv.lo <= 0xDFFF && iv.hi >= 0xD800 {
			t.Errorf("interval %x-%x holds surrogates", iv.lo, iv.hi)
		}
		total += int(iv.hi-iv.lo) + 1
		next = iv.hi + 1
		if next == 0xD800 {
			next = 0xE000
		}
	}
	if want := int(utf8.MaxRune) + 1 - 0x800; total != want {
		t.Errorf("intervals cover %d runes, want %d", total, want)
	}
	if !slices.Contains(ivs, interval{'x', 'x'}) {
		t.Errorf("no interval for the cut x: %v", ivs)
	}
}
