// Package cli is the crdguard command: `crdguard diff`, `check`, `rules`, `version`, and the
// GitHub Action. cmd/crdguard (the name people install) and cmd/action (what the action's image
// runs) are both this program.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/action"
	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// Exit codes (DESIGN §3).
const (
	exitOK       = 0 // nothing at or above --fail-on
	exitFindings = 1 // findings at or above --fail-on
	exitTool     = 2 // the tool could not do its job
)

const usage = `crdguard keeps CustomResourceDefinition upgrades safe: it compares two versions of
your CRDs and reports every change that would break stored objects or existing clients.

Usage:
  crdguard diff [flags] OLD NEW   compare CRDs in two files or directories
                                  (CRDs are paired by metadata.name, not by file); OLD may be
                                  kube://NAME: the CRD installed in a cluster, whose
                                  status.storedVersions says which versions hold data
                                  (--kubeconfig FILE, --context NAME)
  crdguard check --base REF [--head REF] [--repo DIR] [--baseline REF]... [--paths GLOBS] [--cluster] [flags]
                                  compare two commits of a git repository: head against its
                                  merge base with base, as a pull request shows it; --paths
                                  (comma separated globs) overrides the config's paths;
                                  --cluster also compares head with the CRDs installed in the
                                  cluster, whose status.storedVersions count as stored
  crdguard rules [--format F]     list every rule with its default severity and doc
  crdguard action                 run as a GitHub Action (the default when GITHUB_ACTIONS=true):
                                  inputs and the event come from the INPUT_* and GITHUB_* variables
  crdguard version                the version, and the Kubernetes libraries it was built with

Flags for diff and check:
  --config FILE      configuration (default: .crdguard.yaml in the working directory for
                     diff, at the repository root for check, if present)
  --format FORMAT    text (default), json, markdown, github (workflow commands), sarif,
                     rdjson (reviewdog) or changelog (Markdown release notes)
  --fail-on LEVEL    error (default), warning or never: exit 1 when a finding is at or above it
  --show-info        text: list the safe changes (info) too, not only their count
  --verbose          text: list every place of each change, and values in full

Flags for a cluster (diff's kube://NAME, check --cluster):
  --kubeconfig FILE  kubeconfig (default: KUBECONFIG, else ~/.kube/config)
  --context NAME     kubeconfig context (default: its current context)
  --max-objects N    stored objects read per changed CRD (default 10000)

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 crdguard could not
do its job (bad flag, unreadable file, bad config).

Examples:
  crdguard diff testdata/examples/widgets/old.yaml testdata/examples/widgets/new.yaml
  crdguard check --base origin/main
  crdguard check --base v1.0.0 --head v1.1.0 --format changelog
`

// Main runs the command line of this process and returns its exit code. releaseVersion and
// releaseCommit are what a release build stamped into package main (empty otherwise).
func Main(releaseVersion, releaseCommit string) int {
	version, commit = releaseVersion, releaseCommit
	tuneGC()
	args := os.Args[1:]
	if len(args) == 0 && os.Getenv("GITHUB_ACTIONS") == "true" {
		args = []string{"action"}
	}
	return run(args, os.Stdout, os.Stderr)
}

// run is the whole program behind Main, so tests can drive it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitTool
	}
	switch args[0] {
	case "diff":
		return runDiff(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "action":
		return action.Run(context.Background(), action.Options{Stdout: stdout})
	case "version", "--version":
		return runVersion(stdout)
	case "rules":
		return runRules(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "crdguard: unknown command %q\n\n%s", args[0], usage)
	return exitTool
}

// commonFlags are the flags every comparing command takes.
type commonFlags struct {
	config, format, failOn string
	showInfo, verbose      bool
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "configuration file (default .crdguard.yaml if present)")
	fs.StringVar(&c.format, "format", "text", "output format: "+strings.Join(report.Formats, ", "))
	fs.StringVar(&c.failOn, "fail-on", "error", "exit 1 on findings at or above: error, warning, never")
	fs.BoolVar(&c.showInfo, "show-info", false, "text: list safe changes (info) too, not only their count")
	fs.BoolVar(&c.verbose, "verbose", false, "text: list every place of a change, and values in full")
}

// threshold is the parsed --fail-on.
func (c *commonFlags) threshold() (policy.FailOn, error) {
	f, err := policy.ParseFailOn(c.failOn)
	if err != nil {
		return f, fmt.Errorf("--fail-on: %w", err)
	}
	return f, nil
}

// loadConfig reads --config, or the default file in dir when it exists.
func (c *commonFlags) loadConfig(dir string) (*policy.Config, error) {
	return policy.Find(c.config, dir)
}

// flagError says what the flag package refused, naming the flag as it was typed (--sho-info,
// not the package's -sho-info), with the nearest flag for a mistyped one, and where the flags
// are listed rather than the whole usage.
func flagError(err error, args []string, fs *flag.FlagSet) error {
	msg := err.Error()
	for _, prefix := range []string{"flag provided but not defined: -", "flag needs an argument: -", "bad flag syntax: "} {
		name, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			continue
		}
		typed := asTyped(name, args)
		switch {
		case prefix == "flag needs an argument: -":
			return fmt.Errorf("%s needs a value (%s VALUE); crdguard --help lists the flags", typed, typed)
		case prefix == "bad flag syntax: ":
			return fmt.Errorf("bad flag %s; crdguard --help lists the flags", typed)
		}
		if near := nearestFlag(name, fs); near != "" {
			return fmt.Errorf("unknown flag %s: did you mean --%s? (crdguard --help lists the flags)", typed, near)
		}
		return fmt.Errorf("unknown flag %s (crdguard --help lists the flags)", typed)
	}
	// "invalid value "x" for flag -max-objects: …": the flag with two dashes, as documented.
	return errors.New(strings.Replace(msg, " for flag -", " for flag --", 1))
}

// asTyped is the argument that named the flag, with its dashes (and without a value given
// with =); the flag with two dashes when no argument did.
func asTyped(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		flagPart, _, _ := strings.Cut(a, "=")
		if strings.TrimLeft(flagPart, "-") == name && strings.HasPrefix(flagPart, "-") {
			return flagPart
		}
	}
	return "--" + name
}

// nearestFlag is the defined flag closest to a mistyped name (at most two edits, or one that
// starts with it), or "".
func nearestFlag(name string, fs *flag.FlagSet) string {
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := crd.EditDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// parseInterspersed parses flags that may come before, between or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// command is what diff and check share: flags, configuration, output and exit code.
type command struct {
	name   string
	fs     *flag.FlagSet
	flags  commonFlags
	stdout io.Writer
	stderr io.Writer
	// root is the absolute folder the findings' relative paths are relative to (report.Root).
	root string
}

func newCommand(name string, stdout, stderr io.Writer) *command {
	c := &command{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError), stdout: stdout, stderr: stderr}
	// The flag package's own error names a flag with one dash and is followed by the whole
	// usage; parse says it as the user typed it, with a short hint (flagError).
	c.fs.SetOutput(io.Discard)
	c.fs.Usage = func() {}
	c.flags.register(c.fs)
	return c
}

// parse parses the flags; when it returns ok false the command ends with code.
func (c *command) parse(args []string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(c.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.stderr, usage)
		return nil, exitOK, false
	}
	if err != nil {
		return nil, c.fail(flagError(err, args, c.fs)), false
	}
	if !slices.Contains(report.Formats, c.flags.format) {
		return nil, c.fail(fmt.Errorf("unknown format %q (allowed: %s)", c.flags.format, strings.Join(report.Formats, ", "))), false
	}
	if _, err := c.flags.threshold(); err != nil {
		return nil, c.fail(err), false
	}
	return pos, 0, true
}

func (c *command) fail(err error) int {
	fmt.Fprintf(c.stderr, "crdguard %s: %v\n", c.name, err)
	return exitTool
}

// finish applies the policy, writes the report and picks the exit code; compared is nil
// outside git mode.
func (c *command) finish(cfg *policy.Config, res check.Result, compared *report.Compared) int {
	out := cfg.Apply(res.Findings)
	change.Assign(out.Findings)
	failOn, _ := c.flags.threshold()
	fails := failOn.Fails(out.Findings)
	rep := report.Report{Findings: out.Findings, CRDs: res.CRDs, Ignored: out.Ignored, Notices: check.Notices(res.Notices, out.Notices), Compared: compared,
		Verdict: &report.Verdict{Fails: fails, Label: cfg.AcknowledgeLabel}, ShowInfo: c.flags.showInfo, Verbose: c.flags.verbose,
		Acknowledged: out.Acknowledged, Root: c.root}
	if err := report.Write(c.stdout, c.flags.format, rep); err != nil {
		return c.fail(err)
	}
	if fails {
		return exitFindings
	}
	return exitOK
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	c := newCommand("diff", stdout, stderr)
	cluster := c.clusterFlags("kube://NAME")
	pos, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return c.fail(fmt.Errorf("want OLD and NEW, got %d argument(s)", len(pos)))
	}
	cfg, err := c.flags.loadConfig(".")
	if err != nil {
		return c.fail(err)
	}
	if wd, err := os.Getwd(); err == nil {
		c.root = wd // the files named are relative to it
	}
	if err := cluster.validate(); err != nil {
		return c.fail(err)
	}
	ctx, cancel := source.WithClusterTimeout(context.Background())
	defer cancel()
	// The two sides are parsed at once: on a large CRD that is a good part of a short run.
	var new *source.Tree
	var newErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		new, newErr = source.ReadPathWith(pos[1], true, cfg.HelmSettings())
	}()
	old, live, err := readOld(ctx, pos[0], cluster.Cluster, cfg.HelmSettings())
	<-read
	if err != nil {
		return c.fail(err)
	}
	if newErr != nil {
		return c.fail(newErr)
	}
	if err := nothingToCompare(pos, old, new); err != nil {
		return c.fail(err)
	}
	opts := rules.Options{KubernetesVersion: cfg.KubernetesMinor()}
	olmNotices, err := check.OLMDelivery(&opts, cfg.Delivery.OLM, func() (string, error) { return source.DirOLMBundle(pos[1]) })
	if err != nil {
		return c.fail(err)
	}
	goSides := check.DirGoTypes(old, new)
	res := check.Trees(old, new, opts)
	res.Notices = append(res.Notices, olmNotices...)
	if live != nil {
		stored, err := check.Stored(ctx, old, new, cluster.stored(live, cfg))
		if err != nil {
			return c.fail(err)
		}
		res = merged(res, stored)
	}
	check.NamedInputs(&res, new)
	check.DirSources(&res, old, new, goSides)
	return c.finish(cfg, res, nil)
}

func runRules(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text, json or markdown")
	if err := fs.Parse(args); err != nil {
		return exitTool
	}
	if err := report.Rules(stdout, *format, rules.All()); err != nil {
		fmt.Fprintln(stderr, "crdguard rules:", err)
		return exitTool
	}
	return exitOK
}

// nothingToCompare refuses two inputs of which neither holds a CRD, nor anything that could be
// one and could not be read: a comparison of nothing would pass whatever the user meant to
// compare (a wrong file, a wrong folder), so it is a usage error, not a verdict.
func nothingToCompare(pos []string, old, new *source.Tree) error {
	for _, t := range []*source.Tree{old, new} {
		if len(t.CRDs)+len(t.Problems)+len(t.Unread)+len(t.NotRendered) > 0 {
			return nil
		}
	}
	var skipped []string // what was not read, when that is why
	for _, n := range append(append([]string{}, old.Notices...), new.Notices...) {
		if !strings.HasSuffix(n, source.NoCRDNotice) {
			skipped = append(skipped, n)
		}
	}
	why := ""
	if len(skipped) > 0 {
		why = " (" + strings.Join(skipped, "; ") + ")"
	}
	return fmt.Errorf("nothing to compare: neither %s nor %s holds a CustomResourceDefinition%s; name the files or folders that hold your CRDs", pos[0], pos[1], why)
}
