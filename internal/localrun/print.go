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

package localrun

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Print writes the plan as --dry-run shows it: the steps in start order, then each step's
// command and every value that differs from the render, with the reason.
func (p *Plan) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan of TrainJob %s/%s in %s\n\n", p.Namespace, p.TrainJob, p.Workdir)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "STEP\tINDEX\tAFTER\tCOMMAND")
	for _, s := range p.Steps {
		after := "-"
		if len(s.After) > 0 {
			var parts []string
			for _, d := range s.After {
				parts = append(parts, d.ReplicatedJob+" "+d.Status)
			}
			after = strings.Join(parts, ", ")
		}
		command := strings.Join(s.Command, " ")
		if s.Skip != "" {
			command = "(skipped: no command)"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.Name, s.Index, after, command)
	}
	_ = tw.Flush()
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "\n%s (pod %s, container %s):\n", s.Name, s.Pod, s.Container)
		if len(s.Rewrites) == 0 {
			b.WriteString("  as rendered\n")
		}
		for _, r := range s.Rewrites {
			fmt.Fprintf(&b, "  %s: %s -> %s (%s)\n", r.Where, r.From, r.To, r.Why)
		}
	}
	if len(p.Ports) > 0 {
		b.WriteString("\nPorts:\n")
		for _, m := range p.Ports {
			fmt.Fprintf(&b, "  %d -> 127.0.0.1:%d\n", m.From, m.To)
		}
	}
	if len(p.Volumes) > 0 {
		b.WriteString("\nVolumes:\n")
		for _, v := range p.Volumes {
			var files []string
			for _, f := range v.Files {
				files = append(files, f.Path)
			}
			fmt.Fprintf(&b, "  %s: %s", v.Name, v.Dir)
			if len(files) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(files, ", "))
			}
			b.WriteString("\n")
			for _, r := range v.Rewrites {
				fmt.Fprintf(&b, "    %s: %s\n", r.Where, r.Why)
			}
		}
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\nNotes:\n")
		for _, warn := range p.Warnings {
			fmt.Fprintf(&b, "  %s\n", warn)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
