package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Retry limits. GitHub asks integrations to wait out secondary rate limits (at least a minute
// when it gives no Retry-After) and to back off on server errors; a CI job must still end.
const (
	// MaxAttempts is how often one request is sent at most.
	MaxAttempts = 5
	// MaxTotalWait bounds the time one run spends waiting for GitHub.
	MaxTotalWait = 5 * time.Minute
	// CompletionBudget is the wait reserved for the request that completes the check run.
	CompletionBudget = 2 * time.Minute
	// secondaryDefaultWait is GitHub's advice when a secondary limit comes without Retry-After.
	secondaryDefaultWait = 60 * time.Second
	// maxBody is how much of an error response is read to classify it.
	maxBody = 64 << 10
)

// Sleeper waits; tests replace it so that no test sleeps.
type Sleeper func(ctx context.Context, d time.Duration) error

// RealSleep waits for d or until ctx is done.
func RealSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retrying is an http.RoundTripper that retries 5xx answers, secondary rate limits (403 or 429
// naming secondary-rate-limits, or carrying Retry-After), plain 429s (which go-github v60 does not
// classify) and exhausted primary limits (x-ratelimit-remaining: 0), within MaxTotalWait.
type Retrying struct {
	Next  http.RoundTripper
	Sleep Sleeper
	Now   func() time.Time
	// Pacer spaces writes; shared by the clients of one run. Nil: no spacing.
	Pacer *Pacer
	// Budget bounds Waited; MaxTotalWait when zero.
	Budget time.Duration
	// Waited is the total time spent waiting, for the log.
	Waited time.Duration
}

// NewRetrying wraps next (http.DefaultTransport when nil).
func NewRetrying(next http.RoundTripper, sleep Sleeper) *Retrying {
	if next == nil {
		next = http.DefaultTransport
	}
	if sleep == nil {
		sleep = RealSleep
	}
	return &Retrying{Next: next, Sleep: sleep, Now: time.Now}
}

// RoundTrip sends the request, waiting and resending as GitHub asks.
func (r *Retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	backoff, secondary := time.Second, 0
	for attempt := 1; ; attempt++ {
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if err := r.pace(req); err != nil {
			return nil, err
		}
		resp, err := r.Next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		wait, retry, secondaryNoHint := r.classify(req, resp, backoff)
		if secondaryNoHint {
			// No Retry-After: at least a minute, then exponentially longer.
			wait = secondaryDefaultWait * time.Duration(1<<secondary)
			secondary++
		}
		if !retry || attempt == MaxAttempts || r.Waited+wait > r.budget() {
			return resp, nil
		}
		drain(resp)
		if err := r.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		r.Waited += wait
		backoff *= 2
	}
}

// MinWriteGap is GitHub's advice for content-creating requests: one at a time, a second apart.
const MinWriteGap = time.Second

// Pacer remembers when the last write was sent.
type Pacer struct {
	mu   sync.Mutex
	last time.Time
}

// pace waits until a write is at least MinWriteGap after the previous one.
func (r *Retrying) pace(req *http.Request) error {
	if r.Pacer == nil || req.Method == http.MethodGet || req.Method == http.MethodHead {
		return nil
	}
	r.Pacer.mu.Lock()
	defer r.Pacer.mu.Unlock()
	if !r.Pacer.last.IsZero() {
		if gap := r.Pacer.last.Add(MinWriteGap).Sub(r.Now()); gap > 0 {
			if err := r.Sleep(req.Context(), gap); err != nil {
				return err
			}
		}
	}
	r.Pacer.last = r.Now()
	return nil
}

func (r *Retrying) budget() time.Duration {
	if r.Budget == 0 {
		return MaxTotalWait
	}
	return r.Budget
}

// classify says whether to retry a response and after how long; secondaryNoHint marks a
// secondary limit without Retry-After, whose waits grow.
func (r *Retrying) classify(req *http.Request, resp *http.Response, backoff time.Duration) (wait time.Duration, retry, secondaryNoHint bool) {
	switch {
	case resp.StatusCode >= 500 && req.Method == http.MethodPost:
		// GitHub may have applied it: the API looks for what it created before sending again.
		return 0, false, false
	case resp.StatusCode >= 500:
		return backoff, true, false
	case resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests:
		return 0, false, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second, true, false
		}
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(r.Now()), 0) + time.Second, true, false
		}
	}
	// The body tells a secondary rate limit from a plain permission error; keep it readable.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if strings.Contains(string(b), "secondary-rate-limits") || strings.Contains(string(b), "secondary rate limit") {
		return secondaryDefaultWait, true, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return secondaryDefaultWait, true, true
	}
	return 0, false, false
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
}
