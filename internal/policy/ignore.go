package policy

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/crdguard/crdguard/internal/finding"
)

// changeIDRE is the shape of a change's stable ID (change.ID: 6 bytes of a hash, in hex).
var changeIDRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// dateLayout is the layout of expires.
const dateLayout = "2006-01-02"

// validIgnore checks one ignore entry and records when it expires.
func (c *Config) validIgnore(i int, ig Ignore) error {
	key := fmt.Sprintf("ignore[%d]", i)
	if ig.Change != "" && !changeIDRE.MatchString(ig.Change) {
		return c.atKey(key+".change", key, fmt.Errorf("%s.change: %q is not a change ID (12 hexadecimal digits: the \"change\" of a finding in the JSON report, or of a review comment)", key, ig.Change))
	}
	var expires time.Time
	if ig.Expires != "" {
		t, err := time.Parse(dateLayout, ig.Expires)
		if err != nil {
			return c.atKey(key+".expires", key, fmt.Errorf("%s.expires: %q is not a date (YYYY-MM-DD, the last day the entry holds)", key, ig.Expires))
		}
		expires = t
	}
	c.expires = append(c.expires, expires)
	if (Ignore{CRD: ig.CRD, Version: ig.Version, Path: ig.Path, Rule: ig.Rule, Change: ig.Change}) == (Ignore{}) {
		return c.atLine(key, fmt.Errorf("%s: matches every finding; name a crd, version, path, rule or change", key))
	}
	return nil
}

// atKey puts the line of key, else of fallback, in front of err.
func (c *Config) atKey(key, fallback string, err error) error {
	if _, ok := c.lines[key]; ok {
		return c.atLine(key, err)
	}
	return c.atLine(fallback, err)
}

// Stabilities of Kubernetes version names, the keys of stability.
const (
	Alpha  = "alpha"
	Beta   = "beta"
	Stable = "stable"
)

// versionRE is Kubernetes' version name convention: v1, v2beta3, v1alpha1.
var versionRE = regexp.MustCompile(`^v[1-9][0-9]*(?:(alpha|beta)[1-9][0-9]*)?$`)

// StabilityOf is a version's stability by Kubernetes' naming convention (v1 stable, v1beta1
// beta, v1alpha1 alpha); "" for a name outside the convention, which no stability cap lowers.
func StabilityOf(version string) string {
	m := versionRE.FindStringSubmatch(version)
	switch {
	case m == nil:
		return ""
	case m[1] == "":
		return Stable
	}
	return m[1]
}

// dataSafety are the rules about objects already stored: stability never lowers them, since
// an alpha version's promise covers its API, not the data a cluster holds in it. invalid-crd and
// samples are mistakes in the manifests, not changes a version's promise allows.
var dataSafety = map[string]bool{
	"stored-version-removed": true, "stored-object-invalid": true, "stored-object-pruned": true,
	"conversion-missing": true, "conversion-webhook-removed": true, "storage-version-changed": true,
	"crd-removed": true, "scope-changed": true, "invalid-crd": true, "sample-invalid": true, "sample-pruned": true,
}

func (c *Config) validStability() error {
	c.ceilings = map[string]finding.Severity{}
	for st, s := range c.Stability {
		sev, err := finding.ParseSeverity(s)
		if err != nil {
			return c.atLine("stability."+st, fmt.Errorf("stability.%s: %q is not allowed (allowed: error, warning, info)", st, s))
		}
		c.ceilings[st] = sev
	}
	return nil
}

// capStability lowers f to the ceiling of its version's stability, saying so in its message.
func (c *Config) capStability(f *finding.Finding) {
	if dataSafety[f.Rule] || f.Version == "" {
		return
	}
	st := StabilityOf(f.Version)
	ceiling, ok := c.ceilings[st]
	if !ok || f.Severity <= ceiling {
		return
	}
	f.Message += fmt.Sprintf(" (lowered from %s to %s by the stability policy: %s versions are capped at %s)", f.Severity, ceiling, st, ceiling)
	f.Severity = ceiling
}

// today is the date ignore entries expire against.
func (c *Config) today() time.Time {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	y, m, d := now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// At returns a copy of c that judges expiry dates on the day of now (tests, reproducible runs).
func (c *Config) At(now func() time.Time) *Config {
	cc := *c
	cc.now = now
	return &cc
}

// expired says whether ignore entry i has lapsed: its last day is before today.
func (c *Config) expired(i int, today time.Time) bool {
	return i < len(c.expires) && !c.expires[i].IsZero() && c.expires[i].Before(today)
}

// entryName names an ignore entry for people: "ignore[1] (line 14, change 0123456789ab)".
func (c *Config) entryName(i int) string {
	ig := c.Ignore[i]
	var parts []string
	if line, ok := c.lines[fmt.Sprintf("ignore[%d]", i)]; ok {
		parts = append(parts, fmt.Sprintf("line %d", line))
	}
	if ig.Change != "" {
		parts = append(parts, "change "+ig.Change)
	}
	name := fmt.Sprintf("ignore[%d]", i)
	if len(parts) > 0 {
		name += " (" + strings.Join(parts, ", ") + ")"
	}
	return name
}
