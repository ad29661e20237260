// Command crdguard checks CustomResourceDefinition changes for upgrade safety: `crdguard diff`,
// `crdguard check`, and the GitHub Action. `go install …/cmd/crdguard@vX.Y.Z` names the binary
// crdguard; cmd/action is the same program.
package main

import (
	"os"

	"github.com/crdguard/crdguard/internal/cli"
)

// version and commit are stamped by release builds: -ldflags "-X main.version=… -X main.commit=…".
var version, commit string

func main() { os.Exit(cli.Main(version, commit)) }
