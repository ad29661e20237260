// Command action is crdguard as the GitHub Action's image runs it, and as `go run ./cmd/action`
// runs it from a checkout; cmd/crdguard is the same program under the name people install.
package main

import (
	"os"

	"github.com/crdguard/crdguard/internal/cli"
)

// version and commit are stamped by release builds: -ldflags "-X main.version=… -X main.commit=…".
var version, commit string

func main() { os.Exit(cli.Main(version, commit)) }
