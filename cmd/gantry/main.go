/*
Copyright 2026 The Gantry Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command gantry is Gantry's command-line tool.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gantry-ml/gantry/internal/version"
)

const usage = `gantry: tools for the Gantry TrainJob operator

Usage:
  gantry render     print the objects the controller would apply for a TrainJob
  gantry runtimes   install or uninstall the shipped runtimes (the Helm chart's installer)
  gantry version    print the version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code: 0 on success, 2 on bad usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "render":
		return runRender(args[1:], stdin, stdout, stderr)
	case "runtimes":
		return runRuntimes(args[1:], stdout, stderr)
	case "version":
		_, _ = fmt.Fprintln(stdout, version.String())
		return 0
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return 0
	default:
		_, _ = fmt.Fprintf(stderr, "gantry: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
