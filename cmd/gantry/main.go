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

// Command gantry is Gantry's command-line tool, also installed as the kubectl plugin
// kubectl-gantry; every verb is in internal/cli.
package main

import (
	"io"
	"os"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gantry-ml/gantry/internal/cli"
)

func main() {
	// The CLI says what matters itself; controller-runtime's client and cache log nothing a user
	// acts on, and without a logger they print a stack trace after 30 s (gantry ui, watch).
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code (see `gantry --help`).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := cli.NewOptions(stdin, stdout, stderr)
	return cli.Execute(o, cli.NewRootCommand(o), args)
}
