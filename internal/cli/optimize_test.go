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
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// search is an OptimizationJob of "default", half way: trial 0 complete (the best so far), 1
// failed, 2 running and reporting, 3 created.
func search(conds ...metav1.Condition) *trainer.OptimizationJob {
	oj := utiltesting.MakeOptimizationJobWrapper("default", "search").UID("search-uid").Trials(4, 2).Seed(42).
		LogUniform("lr", "0.0001", "0.1", trainer.ParameterTypeFloat).Categorical("opt", "adam", "sgd").Obj()
	oj.CreationTimestamp = metav1.NewTime(testCreated)
	if conds == nil {
		conds = []metav1.Condition{
			condition(optimization.ConditionCreated, optimization.ReasonCreated, "OptimizationJob is created"),
			condition(optimization.ConditionRunning, optimization.ReasonTrialsRunning, "2 of 4 trials finished (1 failed), 2 running"),
		}
	}
	oj.Status.Conditions = conds
	oj.Status.Result = &trainer.OptimizationResult{TrainJobName: "search-0",
		Parameters: []trainer.ParameterAssignment{{Name: "lr", Value: "0.01"}, {Name: "opt", Value: "adam"}}}
	return oj
}

// trial is trial index of search, with its values and the objective it reported ("" none).
func trial(oj *trainer.OptimizationJob, index int, lr, opt, loss string) *trainer.TrainJob {
	w := utiltesting.MakeTrainJobWrapper("default", optimization.TrialName(oj.Name, index)).
		RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").Created(testCreated.Add(time.Duration(index)*time.Minute)).
		Label(optimization.JobNameLabel, oj.Name).Label(optimization.TrialIndexLabel, strconv.Itoa(index)).
		Annotation(optimization.ParametersAnnotation, `[{"name":"lr","value":"`+lr+`"},{"name":"opt","value":"`+opt+`"}]`)
	if loss != "" {
		w = w.TrainerStatus(&trainer.TrainJobTrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: loss}}})
	}
	tj := w.Obj()
	tj.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))}
	return tj
}

// searchTrials are search's four trials and a TrainJob labelled as its trial that it does not
// own, which no view counts.
func searchTrials(oj *trainer.OptimizationJob) []client.Object {
	done := trial(oj, 0, "0.01", "adam", "0.25")
	done.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobComplete, "Completed", "jobset completed successfully")}
	bad := trial(oj, 1, "0.09", "sgd", "")
	bad.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobFailed, "FailedJobs", "jobset failed")}
	running := trial(oj, 2, "0.001", "sgd", "0.4")
	running.Status.JobsStatus = []trainer.JobStatus{runningNodes()}
	stray := trial(oj, 3, "1", "x", "0.01")
	stray.Name, stray.OwnerReferences = "stray", nil
	return []client.Object{done, bad, running, trial(oj, 3, "0.0003", "adam", ""), stray}
}

// optimizationCluster holds search and a finished search "grid" of team-b.
func optimizationCluster() fixture {
	oj := search()
	grid := utiltesting.MakeOptimizationJobWrapper("team-b", "grid").Grid().Categorical("opt", "adam").
		Objective("accuracy", trainer.ObjectiveDirectionMaximize).Obj()
	grid.CreationTimestamp = metav1.NewTime(testCreated)
	grid.Status.Conditions = []metav1.Condition{condition(optimization.ConditionComplete, optimization.ReasonBestTrialFound, "all 1 trials finished (0 failed); best trial grid-0")}
	return fixture{objs: append(searchTrials(oj), torchRuntime(), oj, grid)}
}

func TestListOptimizationJobs(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"a table: trials done of all, running, the best objective": {
			args: []string{"list", "optimizationjobs"},
			want: result{Stdout: `NAME     STATE     TRIALS   RUNNING   BEST   AGE
search   Running   2/4      2         0.25   90m
`},
		},
		"the alias oj, -A, -o wide": {
			args: []string{"list", "oj", "-A", "-o", "wide"},
			want: result{Stdout: `NAMESPACE   NAME     STATE      TRIALS   RUNNING   BEST   AGE   OBJECTIVE             ALGORITHM          BEST-TRIAL   MESSAGE
default     search   Running    2/4      2         0.25   90m   loss (Minimize)       random (seed 42)   search-0     2 of 4 trials finished (1 failed), 2 running
team-b      grid     Complete   0/1      0         -      90m   accuracy (Maximize)   grid               -            all 1 trials finished (0 failed); best trial grid-0
`},
		},
		"-o name": {
			args: []string{"list", "optimizationjobs", "-o", "name"},
			want: result{Stdout: "optimizationjob.trainer.kubeflow.org/search\n"},
		},
		"-o jsonpath over the views": {
			args: []string{"list", "oj", "-o", "jsonpath={range .items[*]}{.name} {.best.name} {.best.objective} {.trialCounts.failed}{end}"},
			want: result{Stdout: "search search-0 0.25 1"},
		},
		"nothing found is said on standard error": {
			args: []string{"list", "oj", "-n", "empty", "--no-headers"},
			want: result{Stderr: "No OptimizationJobs found in namespace empty.\n"},
		},
		"the TrainJob list is as it was, trials included": {
			args: []string{"list", "-l", optimization.TrialIndexLabel + "=0"},
			want: result{Stdout: `NAME       STATE      RUNTIME             NODES   GPUS   PROGRESS   ETA   AGE
search-0   Complete   torch-distributed   2       4      -          -     90m
`},
		},
		"an argument": {
			args: []string{"list", "oj", "search"},
			want: usage(`unknown command "search" for "gantry list optimizationjobs"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, optimizationCluster().run(t, tc.args...))
		})
	}
}

func TestGetOptimizationJob(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"the spec, the best so far, the trials and the conditions": {
			args: []string{"get", "optimizationjob/search"},
			want: result{Stdout: `Name:          search
Namespace:     default
State:         Running
Message:       2 of 4 trials finished (1 failed), 2 running
Objective:     loss (Minimize)
Algorithm:     random (seed 42)
Trials:        2/4 done (1 failed), 2 running; numTrials 4, parallelTrials 2
Created:       2026-01-01T10:30:00Z (90m ago)
Best so far:   search-0 (loss 0.25)
  lr           0.01
  opt          adam

Parameters:
  NAME   SEARCH SPACE
  lr     logUniform [0.0001, 0.1] Float
  opt    categorical adam, sgd (2)

Trials:
  TRIAL      STATE      LR       OPT    LOSS
* search-0   Complete   0.01     adam   0.25
  search-1   Failed     0.09     sgd    -
  search-2   Running    0.001    sgd    0.4
  search-3   Created    0.0003   adam   -

Conditions:
  TYPE      STATUS   REASON          AGE   MESSAGE
  Created   True     Created         30m   OptimizationJob is created
  Running   True     TrialsRunning   30m   2 of 4 trials finished (1 failed), 2 running
`},
		},
		"oj/, -o jsonpath over the view": {
			args: []string{"get", "oj/search", "-o", "jsonpath={.state} {.best.parameters.lr} {.trials[*].state}"},
			want: result{Stdout: "Running 0.01 Complete Failed Running Created"},
		},
		"-o name": {
			args: []string{"get", "optimizationjob.trainer.kubeflow.org/search", "-o", "name"},
			want: result{Stdout: "optimizationjob.trainer.kubeflow.org/search\n"},
		},
		"trainjob/NAME is a TrainJob, as list -o name prints it": {
			args: []string{"get", "trainjob.trainer.kubeflow.org/search-0", "-o", "jsonpath={.state}"},
			want: result{Stdout: "Complete"},
		},
		"a missing OptimizationJob: 4": {
			args: []string{"get", "oj/nope"},
			want: failed(ExitNotFound, `OptimizationJob "nope" not found in namespace "default"`),
		},
		"an unknown kind: 2": {
			args: []string{"get", "pod/x"},
			want: usage(`"pod/x": unknown kind "pod": give NAME, trainjob/NAME or optimizationjob/NAME`),
		},
		"no name after the kind: 2": {
			args: []string{"get", "oj/"},
			want: usage(`"oj/": give a name after the /`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, optimizationCluster().run(t, tc.args...))
		})
	}
}

const optimizationJobYAML = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata:
  name: search
spec:
  objectives: [{metric: loss}]
  parameters:
  - name: lr
    searchSpace: {logUniform: {min: "0.0001", max: "0.1"}}
  numTrials: 4
  trainJobTemplate:
    spec:
      runtimeRef: {name: torch-distributed}
`

func TestOptimize(t *testing.T) {
	file := writeFile(t, "search.yaml", optimizationJobYAML)
	trainFile := writeFile(t, "job.yaml", trainJobYAML)
	two := writeFile(t, "two.yaml", optimizationJobYAML+"---\n"+optimizationJobYAML)
	created := "optimizationjob.trainer.kubeflow.org/search created\n"
	hint := "Follow it with: gantry get optimizationjob/search\nIts trials: gantry list -l optimization.gantry.dev/job-name=search\n"
	// watching creates the job, then feeds the wait's watch the job as it ends, its trials there.
	watching := func(oj *trainer.OptimizationJob) fixture {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		f := fixture{objs: searchTrials(oj), ctx: ctx}
		f.funcs = interceptor.Funcs{Watch: watchOf(cancel, watch.Event{Type: watch.Modified, Object: oj})}
		return f
	}
	never := interceptor.Funcs{Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
		return watch.NewFake(), nil
	}}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"from a file: the name and how to follow it": {
			args: []string{"optimize", "-f", file},
			want: result{Stdout: created, Stderr: hint},
		},
		"-n is repeated in the hints": {
			args: []string{"optimize", "-f", file, "-n", "team-b", "--name", "other"},
			want: result{Stdout: "optimizationjob.trainer.kubeflow.org/other created\n",
				Stderr: "Follow it with: gantry get optimizationjob/other -n team-b\nIts trials: gantry list -n team-b -l optimization.gantry.dev/job-name=other\n"},
		},
		"--dry-run=server": {
			args: []string{"optimize", "-f", file, "--dry-run=server"},
			want: result{Stdout: "optimizationjob.trainer.kubeflow.org/search created (server dry run)\n"},
		},
		"--wait: complete, the best trial": {
			cluster: watching(search(condition(optimization.ConditionComplete, optimization.ReasonBestTrialFound, "all 4 trials finished (1 failed); best trial search-0"))),
			args:    []string{"optimize", "-f", file, "--wait"},
			want: result{Stdout: created + `optimizationjob.trainer.kubeflow.org/search is Complete: all 4 trials finished (1 failed); best trial search-0
Best trial:   search-0
  lr          0.01
  opt         adam
Objective:    loss 0.25 (Minimize)
`, Stderr: hint},
		},
		"--wait: failed: 1, the best trial before": {
			cluster: watching(search(condition(optimization.ConditionFailed, optimization.ReasonTooManyFailedTrials, "4 trials failed, more than the 3 allowed"))),
			args:    []string{"optimize", "-f", file, "--wait", "--timeout", "1h"},
			want: result{Code: ExitJobFailed, Stdout: created + `optimizationjob.trainer.kubeflow.org/search is Failed: 4 trials failed, more than the 3 allowed
Best trial:   search-0
  lr          0.01
  opt         adam
Objective:    loss 0.25 (Minimize)
`, Stderr: hint + "error: OptimizationJob search failed: 4 trials failed, more than the 3 allowed\n"},
		},
		"--wait --timeout: 3": {
			cluster: fixture{funcs: never},
			args:    []string{"optimize", "-f", file, "--wait", "--timeout", "10ms"},
			want: result{Code: ExitTimeout, Stdout: created,
				Stderr: hint + "error: timed out after 10ms waiting for OptimizationJob search to end (it is Created: )\n"},
		},
		"no file": {
			args: []string{"optimize"},
			want: usage("give -f FILE"),
		},
		"a file without an OptimizationJob": {
			args: []string{"optimize", "-f", trainFile},
			want: usage(trainFile + " holds no OptimizationJob (kind: OptimizationJob, apiVersion: trainer.kubeflow.org/v1alpha1)"),
		},
		"two OptimizationJobs": {
			args: []string{"optimize", "-f", two},
			want: usage(two + " holds more than one OptimizationJob; give one per optimize"),
		},
		"--wait with --dry-run": {
			args: []string{"optimize", "-f", file, "--wait", "--dry-run=server"},
			want: usage("--wait needs an OptimizationJob that runs: leave out --dry-run"),
		},
		"--dry-run=client is not offered": {
			args: []string{"optimize", "-f", file, "--dry-run=client"},
			want: usage(`--dry-run must be "none" or "server", got "client"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, tc.cluster.run(t, tc.args...))
		})
	}
}

func TestCompleteGetNames(t *testing.T) {
	got := optimizationCluster().run(t, "__complete", "get", "s")
	want := []string{"search-0", "search-1", "search-2", "search-3", "stray", ":4"}
	if diff := diffText(strings.Join(want, "\n"), strings.TrimSpace(strings.Split(got.Stdout, "Completion")[0])); diff != "" {
		t.Errorf("completions (-want,+got):\n%s", diff)
	}
	got = optimizationCluster().run(t, "__complete", "get", "optimizationjob/")
	if !strings.HasPrefix(got.Stdout, "optimizationjob/search\n:4\n") {
		t.Errorf("completions of optimizationjob/: %q", got.Stdout)
	}
}
