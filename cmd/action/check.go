package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	var cf commonFlags
	cf.register(fs)
	base := fs.String("base", "", "ref the change goes into (branch, tag, remote branch or SHA); required")
	head := fs.String("head", "HEAD", "ref with the change")
	repoDir := fs.String("repo", ".", "a folder inside the git repository")
	var baselines stringList
	fs.Var(&baselines, "baseline", "another ref to compare head with, such as a release tag (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitTool
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "crdguard check:", err)
		return exitTool
	}
	if len(pos) != 0 {
		return fail(fmt.Errorf("unexpected argument %q (refs are given with --base and --head)", pos[0]))
	}
	if *base == "" {
		return fail(errors.New("--base is required, e.g. --base origin/main"))
	}
	failAt, fails, err := cf.threshold()
	if err != nil {
		return fail(err)
	}
	repo, err := source.OpenRepo(*repoDir)
	if err != nil {
		return fail(err)
	}
	repo.Token = os.Getenv("GITHUB_TOKEN")
	root := repo.Root()
	if root == "" {
		root = *repoDir
	}
	cfg, err := cf.loadConfig(root)
	if err != nil {
		return fail(err)
	}
	filter := source.Filter{Paths: cfg.Paths, Exclude: cfg.Exclude}
	if err := filter.Validate(); err != nil {
		return fail(fmt.Errorf("config: %w", err))
	}
	res, err := check.Git(repo, check.GitOptions{
		Base: *base, Head: *head, Baselines: append(append([]string{}, cfg.Baselines...), baselines...), Filter: filter,
	})
	if err != nil {
		return fail(err)
	}
	out := cfg.Apply(res.Findings)
	rep := report.Report{Findings: out.Findings, CRDs: res.CRDs, Ignored: out.Ignored, Notices: res.Notices}
	if err := report.Write(stdout, cf.format, rep); err != nil {
		return fail(err)
	}
	return exitCode(out.Findings, failAt, fails)
}
