package github

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
)

// hostileTexts are the strings the report fixtures try to break out with (report_test.go's
// hostile report), and the other ways GitHub Markdown links, mentions or hides text.
var hostileTexts = []string{
	"removed <script>alert(1)</script> @octocat [click](https://evil.example) `code`\nnext line",
	`.spec["a|b"]`,
	"value \x1b[31mred\x1b[0m removed",
	"release/<b>@octocat",
	"see <https://evil.example> or www.evil.example or mail admin@evil.example, fixes #12",
	"![img](https://evil.example/x.png) [ref][1] [^note]\n\n[1]: https://evil.example",
	"*emph* _emph_ **strong** ~~gone~~ $x^2$ a\\*b `a|b` <!-- hidden --> &lt; &amp;",
	"# heading", "#12 at the start", "> quote", "- item", "1. item", "    indented code", "```", "| a | b |", "---",
	".spec.labels.*.x.*", `self.all(x, x.matches('^[a-z]+$')) && size(self) <= 3`,
}

// gfm renders Markdown as GitHub does: GFM (tables, strikethrough, autolinks, task lists) with
// raw HTML passed through, which GitHub then sanitises; here nothing from the pull request may
// come out as HTML at all.
func gfm(t *testing.T, md string) *html.Node {
	t.Helper()
	var buf bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe())).Convert([]byte(md), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// text is the text a reader sees, without the zero-width spaces that defuse mentions and links.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "\u200b", ""))
}

// find returns the first element named tag.
func find(n *html.Node, tag string) *html.Node {
	if n.Type == html.ElementNode && n.Data == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, tag); f != nil {
			return f
		}
	}
	return nil
}

// mention is what GitHub links in rendered text, after Markdown: @-mentions and #-references.
var mention = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]`)

// emoji is a shortcode GitHub shows as an emoji in rendered text (:+1: is 👍).
var emoji = regexp.MustCompile(`:[a-z0-9_+-]+:`)

// inert fails when the rendered document holds an element crdguard's templates do not make, a
// link that is not to the rules' docs, an HTML comment, an @-mention or an issue reference.
func inert(t *testing.T, what string, doc *html.Node, docsURL string) {
	t.Helper()
	ours := []string{"html", "head", "body", "p", "strong", "code", "h1", "h2", "h3", "h4", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "ul", "li", "blockquote", "a"}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			if !slices.Contains(ours, n.Data) {
				t.Errorf("%s: element <%s> came out of the Markdown", what, n.Data)
			}
			if n.Data == "a" {
				for _, a := range n.Attr {
					if a.Key == "href" && !strings.HasPrefix(a.Val, docsURL+"#") {
						t.Errorf("%s: link to %q", what, a.Val)
					}
				}
			}
		case html.CommentNode:
			if !fingerprintRE.MatchString("<!--"+n.Data+"-->") && !reviewMarkerRE.MatchString("<!--"+n.Data+"-->") {
				t.Errorf("%s: HTML comment %q rendered", what, n.Data)
			}
		case html.TextNode: // GitHub links nothing inside code
			if mention.MatchString(n.Data) && (n.Parent == nil || n.Parent.Data != "code") || emoji.MatchString(n.Data) && (n.Parent == nil || n.Parent.Data != "code") {
				t.Errorf("%s: mention or emoji in %q", what, n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// TestEscapedMarkdownRendersAsPlainText renders every hostile string through a GFM renderer,
// alone (a paragraph) and in a table cell: nothing links, mentions or becomes HTML, and the
// text a reader sees is the plain message (line breaks and control characters as spaces).
func TestEscapedMarkdownRendersAsPlainText(t *testing.T) {
	plainText := func(s string) string {
		return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, s)), " ")
	}
	for _, s := range hostileTexts {
		para := gfm(t, report.Escape(s))
		inert(t, "paragraph "+s, para, "-")
		if got, want := strings.Join(strings.Fields(text(para)), " "), plainText(s); got != want {
			t.Errorf("paragraph of %q reads\n%q, want\n%q", s, got, want)
		}
		table := gfm(t, "| a | b |\n|---|---|\n| "+report.Escape(s)+" | end |\n")
		inert(t, "cell "+s, table, "-")
		td := find(find(table, "tbody"), "td")
		if td == nil {
			t.Fatalf("no table cell for %q", s)
		}
		next := td
		for next != nil && next != td.Parent.LastChild && (next == td || next.Type != html.ElementNode) {
			next = next.NextSibling
		}
		if next == nil || next.Data != "td" || text(next) != "end" {
			t.Errorf("%q broke the table row", s)
			continue
		}
		if got, want := strings.Join(strings.Fields(text(td)), " "), plainText(s); got != want {
			t.Errorf("cell of %q reads\n%q, want\n%q", s, got, want)
		}
	}
}

// TestPullRequestMarkdownIsInert renders what crdguard posts — review comments, the review
// body, the check run summary and the Markdown report — with every field of the findings
// hostile: only crdguard's own elements and links to the rules' docs come out.
func TestPullRequestMarkdownIsInert(t *testing.T) {
	var fs []finding.Finding
	for i, s := range hostileTexts {
		fs = append(fs, finding.Finding{Rule: "field-removed", Severity: finding.Error, CRD: s, Version: s, Path: s, Message: s,
			Before: finding.Value(s), After: finding.Value(s), Location: finding.Location{File: "config/" + s + ".yaml", Line: i + 1, Side: finding.Base},
			Locations: []finding.Location{{File: "a.yaml", Line: 1}, {File: s, Line: 2}}})
	}
	for i := range fs {
		f := &fs[i]
		inert(t, "comment", gfm(t, CommentBody(f, Fingerprint(f, "x"), DefaultDocsURL)), DefaultDocsURL)
	}
	var items []*planned
	for i := range fs {
		items = append(items, &planned{f: &fs[i], fp: Fingerprint(&fs[i], "x")})
	}
	inert(t, "review body", gfm(t, reviewBody(items, nil, DefaultDocsURL)), DefaultDocsURL)
	summary, rest := Summary(report.Report{Findings: fs, CRDs: 2}, "")
	if rest != "" {
		t.Fatalf("the check run's text holds what its summary has room for:\n%s", rest)
	}
	inert(t, "summary", gfm(t, summary), DefaultDocsURL)
	// A release too big for the summary: the check run's text holds the rest, as inert.
	var big []finding.Finding
	for i := 0; i < 40; i++ {
		for _, f := range fs {
			f.Path += strings.Repeat(" ", i)
			f.Change = ""
			big = append(big, f)
		}
	}
	summary, rest = Summary(report.Report{Findings: big, CRDs: 2}, "")
	if rest == "" {
		t.Fatal("the release fits in the summary")
	}
	inert(t, "summary of a big release", gfm(t, summary), DefaultDocsURL)
	inert(t, "text", gfm(t, rest), DefaultDocsURL)
	var md bytes.Buffer
	if err := report.Markdown(&md, report.Report{Findings: fs, CRDs: 2, Notices: hostileTexts,
		Compared: &report.Compared{Base: "b", Head: "h", MergeBase: "m", BaseRef: hostileTexts[3]}}); err != nil {
		t.Fatal(err)
	}
	inert(t, "markdown report", gfm(t, md.String()), DefaultDocsURL)
}
