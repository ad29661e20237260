package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/crdguard/crdguard/internal/report"
)

// buildVersion describes the binary: its module version and commit, the Go toolchain, and the
// Kubernetes libraries whose API-server code gives the verdicts.
type buildVersion struct {
	Version, Commit, Go, APIExtensions, APIMachinery string
}

// version and commit come from package main through Main: release builds set them there
// (.ci/build-binary.sh with CRDGUARD_VERSION and CRDGUARD_COMMIT, GoReleaser with the same
// -ldflags "-X main.version=… -X main.commit=…"), because a release is built from a checkout,
// where the module's own version is not known to the Go toolchain, and the image is built
// without .git. `go install …@vX.Y.Z` leaves them empty and the build info has the version.
var version, commit string

func readBuildVersion() buildVersion {
	v := buildInfoVersion()
	if version != "" {
		v.Version = version
	}
	if commit != "" {
		v.Commit = commit
	}
	return v
}

// buildInfoVersion is what the Go toolchain recorded in the binary.
func buildInfoVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Commit: "unknown", Go: runtime.Version(), APIExtensions: "unknown", APIMachinery: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v.Commit = s.Value
		}
	}
	for _, d := range info.Deps {
		switch d.Path {
		case "k8s.io/apiextensions-apiserver":
			v.APIExtensions = d.Version
		case "k8s.io/apimachinery":
			v.APIMachinery = d.Version
		}
	}
	return v
}

func init() { report.Version = readBuildVersion().Version }

func runVersion(stdout io.Writer) int {
	v := readBuildVersion()
	fmt.Fprintf(stdout, "crdguard %s\ncommit: %s\ngo: %s\nk8s.io/apiextensions-apiserver: %s (the API server's validation and verdicts)\nk8s.io/apimachinery: %s\n",
		v.Version, v.Commit, v.Go, v.APIExtensions, v.APIMachinery)
	return exitOK
}
