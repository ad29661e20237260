package policy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
)

func TestAcknowledgementConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"change id of the wrong shape", "ignore:\n  - change: 12ab\n    reason: planned\n",
			`line 2: ignore[0].change: "12ab" is not a change ID (12 hexadecimal digits: the "change" of a finding in the JSON report, or of a review comment)`},
		{"change id in capitals", "ignore:\n  - {rule: field-removed, reason: x}\n  - reason: planned\n    change: 0123456789AB\n",
			`line 4: ignore[1].change: "0123456789AB" is not a change ID (12 hexadecimal digits: the "change" of a finding in the JSON report, or of a review comment)`},
		{"expires not a date", "ignore:\n  - change: 0123456789ab\n    expires: next week\n    reason: planned\n",
			`line 3: ignore[0].expires: "next week" is not a date (YYYY-MM-DD, the last day the entry holds)`},
		{"expires not a day of the calendar", "ignore:\n  - {change: 0123456789ab, expires: 2026-02-30, reason: planned}\n",
			`line 2: ignore[0].expires: "2026-02-30" is not a date (YYYY-MM-DD, the last day the entry holds)`},
		{"expires alone matches everything", "ignore:\n  - {expires: 2026-02-01, reason: planned}\n",
			`line 2: ignore[0]: matches every finding; name a crd, version, path, rule or change`},
		{"misspelt change", "ignore:\n  - {chnage: 0123456789ab, reason: planned}\n", `line 2: unknown key chnage (did you mean change?)`},
		{"misspelt expires", "ignore:\n  - change: 0123456789ab\n    expire: 2026-01-01\n    reason: planned\n", `line 3: unknown key expire (did you mean expires?)`},
		{"stability not a mapping", "stability: alpha\n", `line 1: stability must be a mapping of stabilities to severities, e.g. stability: {alpha: warning}`},
		{"misspelt stability", "stability:\n  alhpa: warning\n", `line 2: unknown key alhpa (did you mean alpha?)`},
		{"stability severity", "stability:\n  beta: off\n", `line 2: stability.beta: "off" is not allowed (allowed: error, warning, info)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse error = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// day is a clock fixed at noon UTC of a date.
func day(date string) func() time.Time {
	return func() time.Time {
		t, err := time.Parse(dateLayout, date)
		if err != nil {
			panic(err)
		}
		return t.Add(12 * time.Hour)
	}
}

// An ignore entry by change ID acknowledges that change, through its last day; after it the
// finding is back and a notice names the entry and the day it expired. An ID that matches
// nothing is a notice naming the entry.
func TestIgnoreByChangeAndExpiry(t *testing.T) {
	in := []finding.Finding{
		f("field-removed", finding.Error, ".spec.legacy", false),
		f("field-removed", finding.Error, ".spec.other", false),
	}
	legacy := change.ID(&in[0])
	config := fmt.Sprintf(`ignore:
  - change: %s
    expires: 2026-03-31
    reason: "clients moved to .spec.modern in v2.3"
  - change: 0123456789ab
    reason: fixed long ago
`, legacy)
	c, err := Parse([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	stale := "ignore[1] (line 5, change 0123456789ab) matches no finding: no change has that ID (fixed, or changed since the ID was copied); remove the entry or copy the current ID from the report"
	for _, tc := range []struct {
		date    string
		kept    []string
		ignored int
		notices []string
	}{
		{"2026-03-31", []string{".spec.other"}, 1, []string{stale}},
		{"2026-04-01", []string{".spec.legacy", ".spec.other"}, 0, []string{
			"ignore[0] (line 2, change " + legacy + `) expired on 2026-03-31: the findings it acknowledged ("clients moved to .spec.modern in v2.3") count again; renew it with a later expires, or fix them`,
			stale,
		}},
	} {
		t.Run(tc.date, func(t *testing.T) {
			out := c.At(day(tc.date)).Apply(in)
			var kept []string
			for _, g := range out.Findings {
				kept = append(kept, g.Path)
			}
			if !reflect.DeepEqual(kept, tc.kept) || out.Ignored != tc.ignored || !reflect.DeepEqual(out.Notices, tc.notices) {
				t.Fatalf("kept %v, ignored %d, notices:\n%s\nwant %v, %d:\n%s", kept, out.Ignored, strings.Join(out.Notices, "\n"), tc.kept, tc.ignored, strings.Join(tc.notices, "\n"))
			}
			if tc.ignored == 1 {
				want := []Acknowledged{{Finding: withChange(in[0]), Reason: "clients moved to .spec.modern in v2.3", By: "ignore[0] (line 2, change " + legacy + ")"}}
				if !reflect.DeepEqual(out.Acknowledged, want) {
					t.Fatalf("acknowledged %+v\nwant %+v", out.Acknowledged, want)
				}
			}
		})
	}
}

func withChange(g finding.Finding) finding.Finding {
	g.Change = change.ID(&g)
	return g
}

// The stability cap lowers breaking changes of alpha versions and leaves v1's; a rule about
// stored data is never lowered, and a version named outside the convention counts as stable.
func TestStabilityCap(t *testing.T) {
	at := func(rule, version, path string) finding.Finding {
		return finding.Finding{Rule: rule, Severity: finding.Error, CRD: "widgets.example.com", Version: version, Path: path, Message: "m"}
	}
	in := []finding.Finding{
		at("field-removed", "v1alpha1", ".spec.legacy"),
		at("field-removed", "v1", ".spec.legacy"),
		at("max-decreased", "v1beta2", ".spec.size"),
		at("stored-version-removed", "v1alpha1", ""),
		at("field-removed", "v1-preview", ".spec.legacy"),
	}
	c, err := Parse([]byte("stability: {alpha: info, beta: warning}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range c.Apply(in).Findings {
		got = append(got, fmt.Sprintf("%s %s %s: %s", g.Version, g.Rule, g.Severity, g.Message))
	}
	want := []string{ // what the API server refuses outright first (finding.Order)
		"v1alpha1 stored-version-removed error: m",
		"v1alpha1 field-removed info: m (lowered from error to info by the stability policy: alpha versions are capped at info)",
		"v1 field-removed error: m",
		"v1beta2 max-decreased warning: m (lowered from error to warning by the stability policy: beta versions are capped at warning)",
		"v1-preview field-removed error: m",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The tightening twin: without stability, nothing is lowered.
	for _, g := range Default().Apply(in).Findings {
		if g.Severity != finding.Error || g.Message != "m" {
			t.Errorf("default policy changed %s %s: %s %s", g.Version, g.Rule, g.Severity, g.Message)
		}
	}
}

func TestStabilityOf(t *testing.T) {
	for v, want := range map[string]string{"v1": Stable, "v12": Stable, "v1beta1": Beta, "v2alpha3": Alpha, "v1alpha": "", "v0": "", "V1": "", "v1beta1x": "", "": ""} {
		if got := StabilityOf(v); got != want {
			t.Errorf("StabilityOf(%q) = %q, want %q", v, got, want)
		}
	}
}

// Decide: a reply by someone with write access acknowledges its comment's change only; every
// other reply acknowledges nothing, and only a refused one from someone without write access is
// answered (once). The label acknowledges a pull request's run. In a merge group or push, a
// change is acknowledged when every pull request that brings it does (by reply or label), and
// no commit of an unknown pull request brings it; without attribution every pull request is
// taken to bring every change.
func TestDecide(t *testing.T) {
	removed := withChange(f("field-removed", finding.Error, ".spec.name", false))
	lowered := withChange(f("max-decreased", finding.Error, ".spec.size", false))
	fs := []finding.Finding{removed, lowered}
	failOn, _ := ParseFailOn("error")
	reply := func(id int64, change, assoc, body string) Reply {
		return Reply{ID: id, To: 1, Change: change, Author: "alice", Association: assoc, Body: body}
	}
	const label = "crd-breaking-change-approved"
	for _, tc := range []struct {
		name    string
		ctx     Context
		kept    []string // rules still counting
		acked   []string // rule: by: reason
		fails   bool
		byLabel bool
		refused []int64 // the replies answered (acknowledged, or refused)
		notes   []string
		brought []string // rule by PRs labelled PRs (unattributed)
	}{
		{name: "MEMBER acknowledges one change", ctx: Context{Run: PullRequestRun, Label: label, PullRequests: []PullRequest{{Number: 42, Replies: []Reply{
			reply(7, removed.Change, "MEMBER", "/crdguard acknowledge name moved to .spec.displayName in v2\n\nthanks"),
		}}}}, kept: []string{"max-decreased"}, acked: []string{"field-removed: @alice (MEMBER) on #42: name moved to .spec.displayName in v2"}, fails: true, refused: []int64{7}},
		{name: "both changes, by OWNER and COLLABORATOR", ctx: Context{Run: PullRequestRun, PullRequests: []PullRequest{{Number: 42, Replies: []Reply{
			reply(7, removed.Change, "OWNER", "/crdguard acknowledge: planned"),
			reply(8, lowered.Change, "COLLABORATOR", "  /crdguard acknowledge  no object uses more than 5"),
		}}}}, acked: []string{"field-removed: @alice (OWNER) on #42: planned", "max-decreased: @alice (COLLABORATOR) on #42: no object uses more than 5"}, refused: []int64{7, 8}},
		{name: "an acknowledgement answered before is not answered again", ctx: Context{Run: PullRequestRun, PullRequests: []PullRequest{{Number: 42, Replies: []Reply{
			{ID: 7, Change: removed.Change, Author: "alice", Association: "MEMBER", Body: "/crdguard acknowledge planned", Answered: true},
		}}}}, kept: []string{"max-decreased"}, acked: []string{"field-removed: @alice (MEMBER) on #42: planned"}, fails: true},
		{name: "CONTRIBUTOR is answered once", ctx: Context{Run: PullRequestRun, PullRequests: []PullRequest{{Number: 42, Replies: []Reply{
			reply(7, removed.Change, "CONTRIBUTOR", "/crdguard acknowledge please"),
			{ID: 9, Change: lowered.Change, Author: "bob", Association: "NONE", Body: "/crdguard acknowledge me too", Answered: true},
		}}}}, kept: []string{"field-removed", "max-decreased"}, fails: true, refused: []int64{7}, notes: []string{
			"reply 7 on #42 by alice (CONTRIBUTOR) acknowledges nothing: only owners, members and collaborators may",
			"reply 9 on #42 by bob (NONE) acknowledges nothing: only owners, members and collaborators may",
		}},
		{name: "no reason, bot, edited, not crdguard's, not the command", ctx: Context{Run: PullRequestRun, PullRequests: []PullRequest{{Number: 42, Replies: []Reply{
			reply(1, removed.Change, "MEMBER", "/crdguard acknowledge"),
			{ID: 2, Change: removed.Change, Author: "renovate[bot]", Association: "NONE", Bot: true, Body: "/crdguard acknowledge automated"},
			{ID: 3, Change: removed.Change, Author: "alice", Association: "MEMBER", Edited: true, Body: "/crdguard acknowledge typo fixed"},
			reply(4, "", "MEMBER", "/crdguard acknowledge not a crdguard comment"),
			reply(5, removed.Change, "MEMBER", "/crdguard acknowledged it"),
			reply(6, removed.Change, "MEMBER", "LGTM\n/crdguard acknowledge second line"),
		}}}}, kept: []string{"field-removed", "max-decreased"}, fails: true, notes: []string{
			"reply 1 on #42 by alice gives no reason: it acknowledges nothing (write /crdguard acknowledge <reason>)",
			"reply 2 on #42 is by a bot (renovate[bot]): it acknowledges nothing",
			"reply 3 on #42 by alice was edited after it was posted: it acknowledges nothing (post a new reply)",
			"reply 4 on #42 by alice answers a comment that is not crdguard's: it acknowledges nothing",
		}},
		{name: "label on the pull request", ctx: Context{Run: PullRequestRun, Label: label, PullRequests: []PullRequest{{Number: 42, Labels: []string{"area/api", label}}}},
			kept: []string{"field-removed", "max-decreased"}, fails: true, byLabel: true},
		{name: "merge group: every pull request labelled", ctx: Context{Run: MergeGroupRun, Label: label, PullRequests: []PullRequest{{Number: 42, Labels: []string{label}}, {Number: 43, Labels: []string{label}}}},
			kept: []string{"field-removed", "max-decreased"}, fails: true, byLabel: true,
			brought: []string{"field-removed by [42 43] replied [] labelled [42 43]", "max-decreased by [42 43] replied [] labelled [42 43]"}},
		{name: "merge group: one pull request not labelled", ctx: Context{Run: MergeGroupRun, Label: label, PullRequests: []PullRequest{{Number: 42, Labels: []string{label}}, {Number: 43}}},
			kept: []string{"field-removed", "max-decreased"}, fails: true,
			brought: []string{"field-removed by [42 43] replied [] labelled [42]", "max-decreased by [42 43] replied [] labelled [42]"}},
		{name: "merge group: each change acknowledged by reply in the pull request that brings it", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Replies: []Reply{reply(7, removed.Change, "MEMBER", "/crdguard acknowledge planned")}, Brings: set(removed.Change)},
			{Number: 43, Replies: []Reply{reply(8, lowered.Change, "MEMBER", "/crdguard acknowledge measured")}, Brings: set(lowered.Change)},
		}}, acked: []string{"field-removed: @alice (MEMBER) on #42: planned", "max-decreased: @alice (MEMBER) on #43: measured"}, refused: []int64{7, 8}},
		// Without attribution each pull request may have brought each change: one reply is not enough.
		{name: "merge group, not attributed: a reply in one pull request each", ctx: Context{Run: MergeGroupRun, Label: label, PullRequests: []PullRequest{
			{Number: 42, Replies: []Reply{reply(7, removed.Change, "MEMBER", "/crdguard acknowledge planned")}},
			{Number: 43, Replies: []Reply{reply(8, lowered.Change, "MEMBER", "/crdguard acknowledge measured")}},
		}}, kept: []string{"field-removed", "max-decreased"}, fails: true, refused: []int64{7, 8},
			brought: []string{"field-removed by [42 43] replied [42] labelled []", "max-decreased by [42 43] replied [43] labelled []"}},
		{name: "merge group: a change both pull requests bring needs both replies", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Replies: []Reply{reply(7, removed.Change, "MEMBER", "/crdguard acknowledge planned")}, Brings: set(removed.Change)},
			{Number: 43, Brings: set(removed.Change, lowered.Change)},
		}}, kept: []string{"field-removed", "max-decreased"}, fails: true, refused: []int64{7},
			brought: []string{"field-removed by [42 43] replied [42] labelled []", "max-decreased by [43] replied [] labelled []"}},
		{name: "merge group: both replies to a change both bring", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Replies: []Reply{reply(7, removed.Change, "MEMBER", "/crdguard acknowledge planned")}, Brings: set(removed.Change)},
			{Number: 43, Replies: []Reply{reply(8, removed.Change, "OWNER", "/crdguard acknowledge also here")}, Brings: set(removed.Change)},
		}}, kept: []string{"max-decreased"}, acked: []string{"field-removed: @alice (MEMBER) on #42; @alice (OWNER) on #43: planned; also here"}, fails: true, refused: []int64{7, 8},
			brought: []string{"max-decreased by [] replied [] labelled []"}},
		{name: "merge group: the label of the pull request that brings the unreplied change", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Labels: []string{label}, Brings: set(removed.Change)},
			{Number: 43, Replies: []Reply{reply(8, lowered.Change, "MEMBER", "/crdguard acknowledge measured")}, Brings: set(lowered.Change)},
		}}, kept: []string{"field-removed"}, acked: []string{"max-decreased: @alice (MEMBER) on #43: measured"}, fails: true, byLabel: true, refused: []int64{8},
			brought: []string{"field-removed by [42] replied [] labelled [42]"}},
		{name: "merge group: a labelled pull request does not cover another's change", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Labels: []string{label}, Brings: set(removed.Change)},
			{Number: 43, Brings: set(lowered.Change)},
		}}, kept: []string{"field-removed", "max-decreased"}, fails: true,
			brought: []string{"field-removed by [42] replied [] labelled [42]", "max-decreased by [43] replied [] labelled []"}},
		{name: "push: a direct commit brings the change too", ctx: Context{Run: PushRun, Label: label, Attributed: true, Unattributed: set(removed.Change), PullRequests: []PullRequest{
			{Number: 42, Labels: []string{label}, Brings: set(removed.Change, lowered.Change)},
		}}, kept: []string{"field-removed", "max-decreased"}, fails: true,
			brought: []string{"field-removed by [42] replied [] labelled [] unattributed", "max-decreased by [42] replied [] labelled [42]"}},
		{name: "merge group: a change no pull request brings alone", ctx: Context{Run: MergeGroupRun, Label: label, Attributed: true, PullRequests: []PullRequest{
			{Number: 42, Labels: []string{label}, Brings: set(lowered.Change)},
			{Number: 43, Labels: []string{label}, Replies: []Reply{reply(8, removed.Change, "MEMBER", "/crdguard acknowledge measured")}},
		}}, kept: []string{"field-removed", "max-decreased"}, fails: true, refused: []int64{8},
			brought: []string{"field-removed by [] replied [] labelled []", "max-decreased by [42] replied [] labelled [42]"}},
		{name: "direct push: no pull request, no label", ctx: Context{Run: PushRun, Label: label}, kept: []string{"field-removed", "max-decreased"}, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(fs, failOn, tc.ctx)
			var kept, acked []string
			var refused []int64
			for _, g := range d.Findings {
				kept = append(kept, g.Rule)
			}
			for _, a := range d.Acknowledged {
				acked = append(acked, a.Finding.Rule+": "+a.By+": "+a.Reason)
			}
			for _, a := range d.Answers {
				refused = append(refused, a.Reply.ID)
			}
			var brought []string
			for _, b := range d.Brought {
				line := fmt.Sprintf("%s by %v replied %v labelled %v", b.Finding.Rule, b.By, b.Replied, b.Labelled)
				if b.Unattributed {
					line += " unattributed"
				}
				brought = append(brought, line)
			}
			if !reflect.DeepEqual(brought, tc.brought) {
				t.Errorf("brought %q, want %q", brought, tc.brought)
			}
			if !reflect.DeepEqual(kept, tc.kept) || !reflect.DeepEqual(acked, tc.acked) || d.Fails != tc.fails || d.ByLabel != tc.byLabel ||
				!reflect.DeepEqual(refused, tc.refused) || !reflect.DeepEqual(d.Notes, tc.notes) {
				t.Fatalf("kept %q acked %q fails %v label %v refused %v notes:\n%s", kept, acked, d.Fails, d.ByLabel, refused, strings.Join(d.Notes, "\n"))
			}
		})
	}
}

func set(ids ...string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}
