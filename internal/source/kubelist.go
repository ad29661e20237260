package source

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Resource names the custom resources of one CRD in one version, as the list URL does.
type Resource struct {
	Group, Version, Plural string
}

// String is plural.group, the name RBAC and kubectl use.
func (r Resource) String() string { return r.Plural + "." + r.Group }

// Listed is what a List read.
type Listed struct {
	// Objects is how many objects were handed to the callback.
	Objects int
	// Truncated says that the list stopped at the limit with more objects left.
	Truncated bool
	// Remaining is the server's estimate of the objects left unread when Truncated (0 when the
	// server gave none).
	Remaining int64
}

// pageSize is how many objects one request asks for: kubectl's own chunk size, small enough
// that the server answers quickly and crdguard holds one page at a time.
const pageSize = 500

// List reads every object of r in all namespaces, page by page with the API server's chunking
// (limit and continue), in r.Version (the server converts objects stored in other versions),
// and calls each with every object; it stops after max objects. Only one page is held at a
// time. Errors name what failed: a missing list permission (verb and resource), a version the
// cluster does not serve, an expired continue token, an unreachable server.
func (k *Conn) List(ctx context.Context, r Resource, max int, each func(obj map[string]any) error) (Listed, error) {
	var done Listed
	cont := ""
	for {
		limit := min(pageSize, max-done.Objects)
		if limit <= 0 {
			return done, nil
		}
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, body, err := k.get(ctx, "/apis/"+r.Group+"/"+r.Version+"/"+r.Plural+"?"+q.Encode())
		if err != nil {
			return done, fmt.Errorf("listing %s: %w", r, err)
		}
		if resp.StatusCode != http.StatusOK {
			return done, k.listError(r, resp, body)
		}
		var page struct {
			Metadata struct {
				Continue           string `json:"continue"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
			Items []map[string]any `json:"items"`
		}
		// apimachinery's decoder: integers become int64 as in unstructured objects, which the
		// validators expect.
		if err := utiljson.Unmarshal(body, &page); err != nil {
			return done, fmt.Errorf("decoding a page of %s from %s: %w", r, k.host, err)
		}
		for _, obj := range page.Items {
			if done.Objects == max {
				break
			}
			done.Objects++
			if err := each(obj); err != nil {
				return done, err
			}
		}
		cont = page.Metadata.Continue
		if cont == "" {
			return done, nil
		}
		if done.Objects >= max {
			done.Truncated = true
			if n := page.Metadata.RemainingItemCount; n != nil {
				done.Remaining = *n
			}
			return done, nil
		}
	}
}

// listError words a refused list request.
func (k *Conn) listError(r Resource, resp *http.Response, body []byte) error {
	var status struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &status)
	why := resp.Status
	if status.Message != "" {
		why += ": " + status.Message
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("not allowed to list %s at %s (needs the list verb on %s in all namespaces): %s", r, k.host, r, why)
	case http.StatusNotFound:
		return fmt.Errorf("the cluster at %s does not serve %s/%s %s: %s", k.host, r.Group, r.Version, r.Plural, why)
	case http.StatusGone:
		return fmt.Errorf("listing %s at %s: the list expired between pages (the server compacted its history); run again: %s", r, k.host, why)
	}
	return fmt.Errorf("listing %s at %s: %s", r, k.host, why)
}
