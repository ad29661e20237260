package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/crdguard/crdguard/internal/policy"
)

// issueCommentRefusal is why crdguard does not run on issue_comment: a comment in a pull request's
// conversation cannot say which change it acknowledges (a reply to crdguard's inline comment
// does, and pull_request_review_comment re-runs the check on it), and an issue_comment run reads
// the default branch's configuration, so its verdict could contradict the pull request's own.
const issueCommentRefusal = "crdguard does not run on issue_comment events: acknowledge a change by replying `/crdguard acknowledge <reason>` to crdguard's inline comment on it, which the pull_request_review_comment trigger re-runs the check on (a comment in the conversation cannot say which change it means, and an issue_comment run reads the default branch's configuration, not the pull request's); remove issue_comment from this workflow's triggers (docs/action.md, \"Acknowledging a deliberate breaking change\")"

// event is what crdguard reads of the webhook payload.
type event struct {
	PullRequest *struct {
		Number int `json:"number"`
		Base   struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA  string `json:"sha"`
			Repo struct {
				Fork bool `json:"fork"`
			} `json:"repo"`
		} `json:"head"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
	} `json:"pull_request"`
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		BaseSHA string `json:"base_sha"`
		HeadRef string `json:"head_ref"`
		BaseRef string `json:"base_ref"`
	} `json:"merge_group"`
	WorkflowRun *workflowRun `json:"workflow_run"`
	// A push: before and after, whether it was forced, and the commits it lists.
	Before  string `json:"before"`
	After   string `json:"after"`
	Forced  bool   `json:"forced"`
	Commits []struct {
		ID string `json:"id"`
	} `json:"commits"`
}

// target is what one run compares and where it reports.
type target struct {
	pr               int // 0 for a push
	base, head       string
	labels           []string
	fork             bool
	nothingToCompare string // set when there is nothing to do, with the reason
	// kind is policy.PullRequestRun, MergeGroupRun, PushRun or "" (explicit refs): whose
	// acknowledgements apply.
	kind string
	// queueRef is a merge group's head_ref (gh-readonly-queue/<base>/pr-<N>-<sha>), baseRef its
	// base_ref (refs/heads/main).
	queueRef, baseRef string
	// run is a workflow_run event's run; the pull request it posts for is found later.
	run *workflowRun
	// forced says a push replaced the branch's commits (compared directly); pushed are the
	// commits a push of a new branch lists, the base found from them later.
	forced bool
	pushed []string
}

func readEvent(name, path string) (target, error) {
	if name == "" || path == "" {
		return target{}, errors.New("GITHUB_EVENT_NAME or GITHUB_EVENT_PATH is not set, so there is no event to say what to compare: crdguard action runs in a GitHub Actions workflow (pull_request, pull_request_target, merge_group or push); elsewhere give the base and head inputs (INPUT_BASE, INPUT_HEAD), or run crdguard check --base REF")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return target{}, fmt.Errorf("reading the event (GITHUB_EVENT_PATH): %w", err)
	}
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return target{}, fmt.Errorf("event %s: %w", path, err)
	}
	switch name {
	case "pull_request", "pull_request_target", "pull_request_review_comment":
		pr := ev.PullRequest
		if pr == nil || pr.Base.SHA == "" || pr.Head.SHA == "" {
			return target{}, fmt.Errorf("%s event without pull_request.base.sha and head.sha", name)
		}
		t := target{pr: pr.Number, base: pr.Base.SHA, head: pr.Head.SHA, fork: pr.Head.Repo.Fork, kind: policy.PullRequestRun}
		for _, l := range pr.Labels {
			t.labels = append(t.labels, l.Name)
		}
		return t, nil
	case "merge_group":
		// A merge queue tests head_sha (base plus the queued pull requests); the required check
		// must report there. There is no pull request to review.
		mg := ev.MergeGroup
		if mg == nil || mg.BaseSHA == "" || mg.HeadSHA == "" {
			return target{}, fmt.Errorf("merge_group event without merge_group.base_sha and head_sha")
		}
		return target{base: mg.BaseSHA, head: mg.HeadSHA, kind: policy.MergeGroupRun, queueRef: mg.HeadRef, baseRef: mg.BaseRef}, nil
	case "push":
		return pushTarget(&ev)
	case "workflow_run":
		return workflowRunTarget(ev.WorkflowRun)
	}
	return target{}, fmt.Errorf("event %q is not supported (use pull_request, pull_request_target, pull_request_review_comment, merge_group, push or workflow_run), and it names no commits to compare: on any event, give them with the action's base input (a ref or SHA) and head input (default HEAD), e.g. for workflow_dispatch with: {base: ${{ inputs.base }}, head: ${{ inputs.head }}}", name)
}
