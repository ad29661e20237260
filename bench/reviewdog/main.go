//go:build ignore

// Command rdlocal runs reviewdog's own pipeline — the rdjson parser, the diff filter and the
// local reporter — as `reviewdog -f=rdjson -reporter=local -filter-mode=MODE -fail-level=LEVEL
// -diff=CMD` does, for reviewdog versions whose command the module proxy cannot build (its
// GitHub, GitLab and Gitea clients); the filter and the reporter are reviewdog's, unchanged.
// run.sh builds it in a module of its own (the build tag keeps it out of the bench module)
// and runs it over crdguard's rdjson for a pull request of every shape the README describes.
// It needs the module proxy, so no test runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/reviewdog/reviewdog"
	"github.com/reviewdog/reviewdog/filter"
	"github.com/reviewdog/reviewdog/parser"
)

func main() {
	var mode filter.Mode
	var level reviewdog.FailLevel
	diffCmd := flag.String("diff", "", "diff command, as reviewdog's -diff")
	flag.Var(&mode, "filter-mode", "as reviewdog's -filter-mode")
	flag.Var(&level, "fail-level", "as reviewdog's -fail-level")
	flag.Parse()
	p, err := parser.New(&parser.Option{FormatName: "rdjson"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var ds reviewdog.DiffService = &reviewdog.EmptyDiff{}
	if mode == filter.ModeDefault && *diffCmd == "" || mode == filter.ModeNoFilter {
		mode = filter.ModeNoFilter
	} else {
		args := strings.Fields(*diffCmd)
		if args[0] == "git" && args[1] == "diff" { // as reviewdog does
			args = append([]string{"git", "diff", "--relative"}, args[2:]...)
		}
		ds = reviewdog.NewDiffCmd(exec.Command(args[0], args[1:]...), 1)
	}
	app := reviewdog.NewReviewdog("crdguard", p, reviewdog.NewRawCommentWriter(os.Stdout), ds, mode, level)
	if err := app.Run(context.Background(), os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "reviewdog:", err)
		os.Exit(1)
	}
}
