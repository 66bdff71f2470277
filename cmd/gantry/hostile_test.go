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

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Hostile input (issue 13): whatever the bytes, gantry render ends with a clear message in
// bounded time and memory, and never panics.

const (
	// hostileDeadline is generous for a 2-core CI machine; the slowest case takes about a second.
	hostileDeadline = 20 * time.Second
	// hostileMaxAlloc bounds the bytes a run allocates, loading the CRD schemas (~50 MiB)
	// included: no input is amplified.
	hostileMaxAlloc = 256 << 20
	// hostileMaxHeap bounds the heap, garbage included, of a heavy run: the largest input
	// rendered, which allocates more, collected as it goes (about 300 MiB at the peak).
	hostileMaxHeap = 512 << 20
)

const (
	hostileJob  = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job\n"
	hostileSpec = "spec:\n  runtimeRef: {name: torch-distributed}\n"
)

// billionLaughs is the classic: nine levels of nine aliases, 9^9 strings once expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(hostileJob + hostileSpec + "  trainer:\n    command: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "    x%s: &%s [%s]\n", n, n, strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", "))
		prev = n
	}
	return b.String()
}

// stringBomb anchors one long string and refers to it aliases times: few nodes, so go-yaml's
// alias-ratio check passes it, but every alias is a copy once converted to JSON.
func stringBomb(size, aliases int) string {
	var b strings.Builder
	b.WriteString(hostileJob + "  annotations: {a: &s " + strings.Repeat("x", size) + "}\n" + hostileSpec + "  trainer:\n    command: [")
	b.WriteString(strings.Repeat("*s, ", aliases))
	// Plain values keep the share of aliases under go-yaml's 99% ratio.
	b.WriteString(strings.Repeat("x, ", aliases/50+50))
	b.WriteString("x]\n")
	return b.String()
}

func flowNesting(depth int) string {
	return hostileJob + hostileSpec + "  trainer:\n    command: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
}

func jsonNesting(depth int) string {
	return `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "job"}, ` +
		`"spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"command": ` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}}}\n"
}

// bigList is a TrainJob whose command holds items of item, to about size bytes.
func bigList(size int, item string) string {
	return hostileJob + hostileSpec + "  trainer:\n    command: [" + strings.Repeat(item+", ", size/(len(item)+2)) + item + "]\n"
}

const runtimeHead = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: rt}\nspec:\n  template:\n    spec:\n"

// runtimeOfJobs is a ClusterTrainingRuntime "rt" whose replicated jobs are jobs.
func runtimeOfJobs(jobs string) string {
	return runtimeHead + "      replicatedJobs: [" + jobs + "]\n"
}

// runtimeOfContainers is a ClusterTrainingRuntime "rt" of about size bytes whose one replicated
// job's containers are all container.
func runtimeOfContainers(size int, container string) string {
	return runtimeHead + "      replicatedJobs:\n      - name: node\n        template:\n          metadata:\n" +
		"            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n          spec:\n            template:\n              spec:\n" +
		"                containers: [" + strings.Repeat(container+", ", size/(len(container)+2)) + container + "]\n"
}

// namedContainers is n containers named c0, c1, ... of image i, and the node container.
func namedContainers(n int) string {
	containers := make([]string, n)
	for i := range containers {
		containers[i] = fmt.Sprintf("{name: c%d, image: i}", i)
	}
	return "{name: node, image: i}, " + strings.Join(containers, ", ")
}

// minimalJobs is n replicated jobs with a name and an empty template, in YAML flow style.
func minimalJobs(n int) string {
	jobs := make([]string, n)
	for i := range jobs {
		jobs[i] = fmt.Sprintf("{name: j%d, template: {}}", i)
	}
	return strings.Join(jobs, ", ")
}

func numNodes(v string) string {
	return hostileJob + hostileSpec + "  trainer: {numNodes: " + v + "}\n"
}

// renderBounded runs gantry render in-process and fails the test unless it returns within
// hostileDeadline, allocating at most hostileMaxAlloc bytes or, for heavy inputs, with a heap of at
// most hostileMaxHeap. Tests using it must not run in parallel: the counts are the process's.
func renderBounded(t *testing.T, args []string, stdin string, heavy bool) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	go func() { done <- run(append([]string{"render"}, args...), strings.NewReader(stdin), &out, &errOut) }()
	peak := heapPeak(done, &code)
	elapsed := time.Since(start)
	if peak < 0 {
		t.Fatalf("gantry render did not return within %v", hostileDeadline)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if !heavy && alloc > hostileMaxAlloc {
		t.Errorf("gantry render allocated %d MiB, want at most %d MiB", alloc>>20, hostileMaxAlloc>>20)
	}
	if heavy && peak > hostileMaxHeap {
		t.Errorf("gantry render's heap reached %d MiB, want at most %d MiB", peak>>20, hostileMaxHeap>>20)
	}
	if os.Getenv("GANTRY_HOSTILE_VERBOSE") != "" {
		t.Logf("input %d KiB: exit %d in %v, %d MiB allocated, heap peak %d MiB", len(stdin)>>10, code,
			elapsed.Round(time.Millisecond), alloc>>20, peak>>20)
	}
	return code, out.String(), errOut.String()
}

// heapPeak samples the heap (live objects and unswept garbage) every millisecond until done
// delivers the exit code into code, and returns the largest sample, or -1 past hostileDeadline.
// Sampling runtime/metrics does not stop the world.
func heapPeak(done <-chan int, code *int) int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(hostileDeadline)
	for {
		metrics.Read(sample)
		peak = max(peak, int64(sample[0].Value.Uint64()))
		select {
		case *code = <-done:
			return peak
		case <-deadline:
			return -1
		case <-tick.C:
		}
	}
}

func TestRenderHostileInput(t *testing.T) {
	cases := map[string]struct {
		stdin    string
		args     []string
		wantCode int
		// wantStderr is the whole of standard error, or with wantStderrHas a part of it.
		wantStderr    string
		wantStderrHas []string
		wantStdoutHas string
		// heavy inputs are the largest rendered, about a second each; skipped with -short.
		heavy bool
	}{
		"a billion laughs: 9^9 strings from nine levels of aliases": {
			stdin:      billionLaughs(),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: yaml: document contains excessive aliasing\n",
		},
		"a long string repeated by aliases: 64 KiB of YAML, 256 MiB of JSON": {
			stdin:      stringBomb(64<<10, 4096),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: its YAML aliases expand it past the 1 MiB limit\n",
		},
		"a 10 MB annotation": {
			stdin:      hostileJob + "  annotations: {a: " + strings.Repeat("x", 10<<20) + "}\n" + hostileSpec,
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: the input is over 1 MiB, the most gantry render reads\n",
		},
		"a 10 MB command list": {
			stdin:      bigList(10<<20, "python"),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: the input is over 1 MiB, the most gantry render reads\n",
		},
		"the limit spread over files": {
			stdin:      "# " + strings.Repeat("x", 600<<10) + "\n",
			args:       []string{"-f", writeFile(t, "# "+strings.Repeat("x", 600<<10)+"\n"), "-f", "-"},
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: the input is over 1 MiB, the most gantry render reads\n",
		},
		"2 MiB of comments and separators": {
			stdin:      strings.Repeat("# padding\n---\n", 2<<20/14),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: the input is over 1 MiB, the most gantry render reads\n",
		},
		"1,001 empty objects": {
			stdin:      strings.Repeat("{}\n---\n", 1001),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: the input has over 1000 documents, the most gantry render reads\n",
		},
		"a command list of 19,000 items: too many": {
			stdin:         bigList(19_000*8, "python"),
			wantCode:      1,
			wantStderrHas: []string{"error: spec.trainer.command: Too many: 19001: must have at most 128 items\n"},
		},
		"a command list of numbers, 1 MiB: too many values": {
			stdin:      bigList(1<<20-200, "0"),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1 holds over 20000 values (mappings, lists and scalars), the most gantry render reads of one object\n",
		},
		"a runtime of 260,000 empty containers, 1 MiB: too many values": {
			stdin:      hostileJob + "spec:\n  runtimeRef: {name: rt}\n---\n" + runtimeOfContainers(1<<20-600, "{}"),
			args:       []string{"-f", "-"},
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 2 holds over 20000 values (mappings, lists and scalars), the most gantry render reads of one object\n",
		},
		"a runtime of 10,000 minimal replicated jobs: 300 KiB, 1.2 GiB to build and print": {
			stdin:      hostileJob + "spec:\n  runtimeRef: {name: rt}\n---\n" + runtimeOfJobs(minimalJobs(10_000)),
			args:       []string{"-f", "-"},
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 2 holds over 20000 values (mappings, lists and scalars), the most gantry render reads of one object\n",
		},
		"a runtime of 6,600 containers, near the most values read: rendered": {
			stdin:         hostileJob + "spec:\n  runtimeRef: {name: rt}\n---\n" + runtimeOfContainers(0, namedContainers(6_600)),
			args:          []string{"-f", "-"},
			wantStdoutHas: "name: c6599\n",
			heavy:         true,
		},
		"a runtime of 10,000 wrong containers: the errors are cut short": {
			stdin:    hostileJob + "spec:\n  runtimeRef: {name: rt}\n---\n" + runtimeOfContainers(30_000, "1"),
			args:     []string{"-f", "-"},
			wantCode: 2,
			wantStderrHas: []string{
				"gantry render: <stdin> (document 2, ClusterTrainingRuntime \"rt\"): ",
				"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]: Invalid value: \"integer\": " +
					"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0] in body must be of type object: \"integer\"; ",
				"; Too many: the checks stopped after 100 errors\n",
			},
		},
		"invalid UTF-8 in a value": {
			stdin:      hostileJob + "  annotations: {a: \"x\xff\xfe\"}\n" + hostileSpec,
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: line 5: invalid UTF-8 (byte 0xff): YAML and JSON must be UTF-8\n",
		},
		"invalid UTF-8 in a key": {
			stdin:      hostileJob + "  annotations: {\xc3: b}\n" + hostileSpec,
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: line 5: invalid UTF-8 (byte 0xc3): YAML and JSON must be UTF-8\n",
		},
		"invalid UTF-8 in JSON": {
			stdin:      `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "j` + "\x80" + `"}}`,
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: line 1: invalid UTF-8 (byte 0x80): YAML and JSON must be UTF-8\n",
		},
		"flow lists 10,000 levels deep": {
			stdin:         flowNesting(10_000),
			wantCode:      2,
			wantStderrHas: []string{"gantry render: <stdin>: document 1: malformed YAML: ", "exceeded max depth"},
		},
		"flow lists 100,000 levels deep": {
			stdin:      flowNesting(100_000),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: yaml: line 8: exceeded max depth of 10000\n",
		},
		"JSON 10,000 levels deep": {
			stdin:      jsonNesting(10_000),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: yaml: exceeded max depth of 10000\n",
		},
		"JSON 100,000 levels deep": {
			stdin:      jsonNesting(100_000),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: yaml: exceeded max depth of 10000\n",
		},
		"an empty file": {
			wantCode:   2,
			wantStderr: "gantry render: no TrainJob in the input: give one with -f\n",
		},
		"only separators and comments": {
			stdin:      "---\n# nothing\n---\n\n---\n",
			wantCode:   2,
			wantStderr: "gantry render: no TrainJob in the input: give one with -f\n",
		},
		"two TrainJobs": {
			stdin:      hostileJob + hostileSpec + "---\n" + hostileJob + hostileSpec,
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 2, TrainJob \"job\"): a second TrainJob; give exactly one (the first is in <stdin> (document 1, TrainJob \"job\"))\n",
		},
		"a TrainJob and its runtime in one stream": {
			stdin:         hostileJob + hostileSpec + "---\n" + mustRead(t, torchRuntime),
			args:          []string{"-f", "-"},
			wantStdoutHas: "kind: JobSet\n",
		},
		"a document that is not a Kubernetes object": {
			stdin:      "name: x\nitems: [1, 2]\n---\n" + hostileJob + hostileSpec,
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1 has no kind: want TrainJob, TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org/v1alpha1\n",
		},
		"a TrainJob without a spec (found by FuzzRead)": {
			stdin:      hostileJob,
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.runtimeRef: Required value: name the runtime the TrainJob runs on\n",
		},
		"a TrainJob without a runtimeRef": {
			stdin:      hostileJob + "spec: {}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.runtimeRef: Required value: name the runtime the TrainJob runs on\n",
		},
		"a scalar": {
			stdin:      "just a string\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1 is a string, not an object: want a mapping with apiVersion, kind and metadata\n",
		},
		"a list": {
			stdin:      "- " + strings.ReplaceAll(hostileJob+hostileSpec, "\n", "\n  ") + "\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1 is a list, not an object: want a mapping with apiVersion, kind and metadata\n",
		},
		"numNodes past int64": {
			stdin:    numNodes("99999999999999999999999999"),
			wantCode: 2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.trainer.numNodes: Invalid value: \"float64\": spec.trainer.numNodes in body must be of type int32: \"float64\"; " +
				"Invalid value: \"\": Checked value must be of type integer with format int32 in spec.trainer.numNodes\n",
		},
		"numNodes past int32": {
			stdin:      numNodes("2147483648"),
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): Invalid value: \"\": Checked value must be of type integer with format int32 in spec.trainer.numNodes\n",
		},
		"numNodes past int32, not validated: refused, not wrapped to 1": {
			stdin:      numNodes("4294967297"),
			args:       []string{"--validate=false", "-f", "-", "-f", torchRuntime},
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): Invalid value: \"\": Checked value must be of type integer with format int32 in spec.trainer.numNodes\n",
		},
		"numNodes past float64": {
			stdin:      numNodes("1e400"),
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.trainer.numNodes: Invalid value: \"string\": spec.trainer.numNodes in body must be of type integer: \"string\"\n",
		},
		"numNodes infinite": {
			stdin:      numNodes(".inf"),
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: json: unsupported value: +Inf\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.heavy && testing.Short() {
				t.Skip("the largest input rendered; skipped with -short")
			}
			args := tc.args
			if args == nil {
				args = []string{"-f", "-", "-f", torchRuntime}
			}
			code, stdout, stderr := renderBounded(t, args, tc.stdin, tc.heavy)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s\nstderr: %.2000s", diff, stderr)
			}
			if tc.wantStderr != "" || len(tc.wantStderrHas) == 0 {
				if diff := cmp.Diff(tc.wantStderr, stderr); diff != "" {
					t.Errorf("stderr (-want,+got):\n%.4000s", diff)
				}
			}
			for _, s := range tc.wantStderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%.2000s", s, stderr)
				}
			}
			if !strings.Contains(stdout, tc.wantStdoutHas) {
				t.Errorf("stdout lacks %q:\n%.2000s", tc.wantStdoutHas, stdout)
			}
		})
	}
}

// writeFile writes data to a new file and returns its path.
func writeFile(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
