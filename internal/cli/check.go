package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// stringList is a repeatable flag.
type stringList []string

// String joins the values, for flag's usage output.
func (s *stringList) String() string { return strings.Join(*s, ",") }

// Set adds one value each time the flag is given.
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runCheck(args []string, stdout, stderr io.Writer) int {
	c := newCommand("check", stdout, stderr)
	base := c.fs.String("base", "", "ref the change goes into (branch, tag, remote branch or SHA); required")
	head := c.fs.String("head", "HEAD", "ref with the change")
	repoDir := c.fs.String("repo", ".", "a folder inside the git repository")
	var baselines, paths stringList
	c.fs.Var(&baselines, "baseline", "another ref to compare head with, such as a release tag (repeatable)")
	c.fs.Var(&paths, "paths", "globs of where CRDs are looked for (comma separated, repeatable); override the config's paths")
	useCluster := c.fs.Bool("cluster", false, "also compare head with the CRDs installed in the cluster (kubeconfig), whose status.storedVersions count as stored")
	cluster := c.clusterFlags("--cluster")
	pos, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return c.fail(fmt.Errorf("unexpected argument %q (refs are given with --base and --head)", pos[0]))
	}
	if *base == "" {
		return c.fail(errors.New("--base is required, e.g. --base origin/main"))
	}
	repo, err := source.OpenRepo(*repoDir)
	if err != nil {
		return c.fail(err)
	}
	defer repo.Close()
	repo.Token = os.Getenv("GITHUB_TOKEN")
	root := repo.Root()
	if root == "" {
		root = *repoDir
	}
	cfg, err := c.flags.loadConfig(root)
	if err != nil {
		return c.fail(err)
	}
	if abs, err := filepath.Abs(root); err == nil {
		c.root = abs // findings name files relative to the repository
	}
	if len(paths) > 0 {
		cfg.Paths = nil
		for _, p := range paths {
			for _, g := range strings.Split(p, ",") {
				if g = strings.TrimSpace(g); g != "" {
					cfg.Paths = append(cfg.Paths, g)
				}
			}
		}
	}
	filter := cfg.Filter()
	if err := filter.Validate(); err != nil {
		return c.fail(fmt.Errorf("config: %w", err))
	}
	headGiven := false
	c.fs.Visit(func(f *flag.Flag) { headGiven = headGiven || f.Name == "head" })
	opts := check.GitOptions{
		WorkingTree: !headGiven, // "before you push": uncommitted edits count
		Base:        *base, Head: *head, Baselines: append(append([]string{}, cfg.Baselines...), baselines...), Filter: filter,
		Samples: cfg.Samples, KubernetesVersion: cfg.KubernetesMinor(), OLM: cfg.Delivery.OLM,
	}
	if *useCluster {
		if err := cluster.validate(); err != nil {
			return c.fail(err)
		}
		conn, err := source.Connect(cluster.Cluster)
		if err != nil {
			return c.fail(err)
		}
		ctx, cancel := source.WithClusterTimeout(context.Background())
		defer cancel()
		opts.Cluster = func(names []string) (*source.Tree, error) { return conn.ReadCRDs(ctx, names) }
		opts.Stored = func(live, head *source.Tree) (check.Result, error) {
			return check.Stored(ctx, live, head, cluster.stored(conn, cfg))
		}
	}
	res, err := check.Git(repo, opts)
	if err != nil {
		return c.fail(err)
	}
	if res.Behind > 0 {
		// Not a notice in the Action: a pull request is meant to be compared with its merge base.
		res.Notices = append([]string{behindNotice(res, *base)}, res.Notices...)
	}
	compared := &report.Compared{Base: res.Base, Head: res.Head, MergeBase: res.MergeBase, BaseRef: *base, HeadRef: *head,
		WorkingTree: len(res.Working) > 0, Release: res.Release}
	return c.finish(cfg, res.Result, compared)
}

// behindNotice says that base moved on since the merge base, which is what was compared, and
// how to compare with base itself.
func behindNotice(res *check.GitResult, base string) string {
	n := fmt.Sprintf("%d commits", res.Behind)
	if res.Behind == 1 {
		n = "1 commit"
	}
	if res.BehindAtLeast {
		n = "at least " + n
	}
	return fmt.Sprintf("comparing with merge base %s, %s behind %s; --baseline %s compares with %s itself", res.MergeBase[:12], n, base, base, base)
}
