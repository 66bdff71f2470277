// Package version reports what Gantry build is running.
package version

import "runtime/debug"

// Version is set at build time with -ldflags "-X github.com/gantry-ml/gantry/internal/version.Version=v0.1.0".
var Version = ""

// String returns the build's version: the linker-set value, else the module version recorded by
// the Go toolchain (set for `go install ...@vX`), else "devel".
func String() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
