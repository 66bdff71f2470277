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
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gantry-ml/gantry/internal/localrun"
)

// getLocal shows a local run from its run.json.
func (g *getOptions) getLocal(name string) error {
	rec, err := readLocalRecord(g.workdir, name)
	if err != nil {
		return err
	}
	if !g.out.table() {
		return g.out.printDocument(g.Streams.Out, rec, []string{"run/" + rec.TrainJob})
	}
	w := g.Streams.Out
	_, _ = fmt.Fprintf(w, "Name:       %s (local run in %s)\n", rec.TrainJob, rec.Workdir)
	_, _ = fmt.Fprintf(w, "State:      %s", rec.State)
	if rec.Message != "" {
		_, _ = fmt.Fprintf(w, " (%s)", rec.Message)
	}
	_, _ = fmt.Fprintf(w, "\nStarted:    %s\n", rec.Started.Format(time.RFC3339))
	if rec.Finished != nil {
		_, _ = fmt.Fprintf(w, "Duration:   %s\n", rec.Finished.Sub(rec.Started).Round(100*time.Millisecond))
	}
	if rec.TrainerStatus != nil {
		_, _ = fmt.Fprintf(w, "Progress:   %s (%d reports)\n", localrun.FormatProgress(rec.TrainerStatus), rec.Reports)
	}
	_, _ = fmt.Fprintln(w, "Steps:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  STEP\tPID\tEXIT\tDURATION\tLOG")
	for _, s := range rec.Steps {
		exit, duration := "-", "-"
		switch {
		case s.Skipped != "":
			exit = "skipped"
		case s.ExitCode != nil:
			exit = fmt.Sprint(*s.ExitCode)
			if s.Signal != "" {
				exit += " (" + s.Signal + ")"
			}
		}
		if s.Started != nil && s.Finished != nil {
			duration = s.Finished.Sub(*s.Started).Round(100 * time.Millisecond).String()
		}
		pid := "-"
		if s.Pid != 0 {
			pid = fmt.Sprint(s.Pid)
		}
		_, _ = fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.Name, pid, exit, duration, s.Log)
	}
	return tw.Flush()
}

// logsLocal prints a local run's step logs from its workdir.
func (lo *logsOptions) logsLocal(name string) error {
	if lo.opts.Follow {
		return usageErrorf("-f does not apply to --local: gantry run --local --follow prints the lines as they come")
	}
	rec, err := readLocalRecord(lo.workdir, name)
	if err != nil {
		return err
	}
	var steps []localrun.StepRecord
	for _, s := range rec.Steps {
		if lo.opts.All || s.Name == lo.opts.Step {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		var names []string
		for _, s := range rec.Steps {
			names = append(names, s.Name)
		}
		return withCode(ExitNotFound, fmt.Errorf("the local run of %q has no step %q; its steps: %s", name, lo.opts.Step, strings.Join(names, ", ")))
	}
	for _, s := range steps {
		if err := lo.printLocalLog(s, lo.opts.All || lo.opts.Prefix); err != nil {
			return err
		}
	}
	return nil
}

func (lo *logsOptions) printLocalLog(s localrun.StepRecord, prefix bool) error {
	if s.Skipped != "" {
		return nil
	}
	f, err := os.Open(s.Log)
	if err != nil {
		return fmt.Errorf("step %s: %w", s.Name, err)
	}
	defer func() { _ = f.Close() }()
	// Lines of any length (a progress bar's \r redraws make long ones); --tail keeps the last N.
	var ring []string
	keep := -1
	if lo.opts.Tail != nil {
		keep = int(*lo.opts.Tail)
	}
	w := lo.Streams.Out
	emit := func(l string) {
		if prefix {
			_, _ = fmt.Fprintf(w, "[%s] %s\n", s.Name, l)
		} else {
			_, _ = fmt.Fprintln(w, l)
		}
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			line = strings.TrimSuffix(line, "\n")
			switch {
			case keep < 0:
				emit(line)
			case keep > 0:
				if ring = append(ring, line); len(ring) > keep {
					ring = ring[1:]
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("step %s: %w", s.Name, err)
		}
	}
	for _, l := range ring {
		emit(l)
	}
	return nil
}
