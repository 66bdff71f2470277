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

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/gantry-ml/gantry/internal/trainjob"
)

// outputFlags are -o and the template flags of kubectl, plus --no-headers for tables.
type outputFlags struct {
	print     *genericclioptions.PrintFlags
	noHeaders bool
}

func addOutputFlags(cmd *cobra.Command, table bool) *outputFlags {
	f := &outputFlags{print: genericclioptions.NewPrintFlags("")}
	f.print.AddFlags(cmd)
	if table {
		cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "Print the table without its header line.")
		cmd.Flag("output").Usage = "Output format. One of: (wide, " + strings.Join(f.print.AllowedFormats(), ", ") + ")."
	}
	return f
}

func (f *outputFlags) format() string { return strings.TrimSpace(*f.print.OutputFormat) }

// table reports whether the output is one of Gantry's own tables ("" or "wide").
func (f *outputFlags) table() bool { return f.format() == "" || f.format() == "wide" }

func (f *outputFlags) wide() bool { return f.format() == "wide" }

// printDocument prints a view document (or a list of them) with -o json, yaml, jsonpath or
// go-template, through kubectl's own printers so the templates behave as they do there. names
// are the "kind.group/name" lines of -o name.
func (f *outputFlags) printDocument(w io.Writer, doc any, names []string) error {
	if f.format() == "name" {
		for _, n := range names {
			if _, err := fmt.Fprintln(w, n); err != nil {
				return err
			}
		}
		return nil
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return err
	}
	p, err := f.print.ToPrinter()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	return p.PrintObj(u, w)
}

// tableWriter aligns columns as kubectl does.
func tableWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

func row(w io.Writer, cols ...string) {
	_, _ = fmt.Fprintln(w, strings.Join(cols, "\t"))
}

// age is kubectl's short duration ("5m", "3h2m", "2d").
func age(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// colorWanted: colour only on a terminal, and never with NO_COLOR (https://no-color.org).
func colorWanted(out io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Colour codes are invisible but tabwriter counts them: every coloured cell of a column, its
// header included (in bold), carries codes of the same length, so the columns still align.
const reset = "\x1b[0m"

func colored(code, s string) string { return "\x1b[" + code + "m" + s + reset }

// stateHeader is the STATE header, bold when the states are coloured.
func (o *Options) stateHeader() string {
	if !o.Color {
		return "STATE"
	}
	return colored("01", "STATE")
}

// stateText is a state as printed, coloured on a terminal.
func (o *Options) stateText(s trainjob.State) string {
	if !o.Color {
		return string(s)
	}
	code := "39" // the terminal's own colour
	switch s {
	case trainjob.StateComplete:
		code = "32" // green
	case trainjob.StateFailed:
		code = "31" // red
	case trainjob.StateRunning:
		code = "36" // cyan
	case trainjob.StateQueued, trainjob.StateRestarting, trainjob.StateSuspended:
		code = "33" // yellow
	}
	return colored(code, string(s))
}
