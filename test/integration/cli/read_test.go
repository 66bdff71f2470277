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
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-ml/gantry/test/util"
)

// The read verbs over the golden namespace, every output form.
var _ = ginkgo.DescribeTable("prints", func(golden string, args ...string) {
	r := gantry(args...)
	gomega.Expect(r.Stderr).To(gomega.BeEmpty())
	gomega.Expect(r.Code).To(gomega.Equal(0))
	expectGolden(golden, r.Stdout)
},
	ginkgo.Entry("list", "list", "list", "-n", goldenNS),
	ginkgo.Entry("list -o wide", "list-wide", "list", "-n", goldenNS, "-o", "wide"),
	ginkgo.Entry("list --no-headers", "list-no-headers", "list", "-n", goldenNS, "--no-headers"),
	ginkgo.Entry("list -o json", "list-json", "list", "-n", goldenNS, "-o", "json"),
	ginkgo.Entry("list -o yaml", "list-yaml", "list", "-n", goldenNS, "-o", "yaml"),
	ginkgo.Entry("list -o name", "list-name", "list", "-n", goldenNS, "-o", "name"),
	ginkgo.Entry("list -o jsonpath", "list-jsonpath", "list", "-n", goldenNS, "-o", `jsonpath={range .items[*]}{.name}={.state}{"\n"}{end}`),
	ginkgo.Entry("list -o go-template", "list-go-template", "list", "-n", goldenNS, "-o", `go-template={{range .items}}{{.name}} {{.nodes}}{{"\n"}}{{end}}`),
	ginkgo.Entry("list --state", "list-state", "list", "-n", goldenNS, "--state", "running,restarting"),
	ginkgo.Entry("list --runtime", "list-runtime", "list", "-n", goldenNS, "--runtime", "custom"),
	ginkgo.Entry("ls -l", "list-selector", "ls", "-n", goldenNS, "-l", "kueue.x-k8s.io/queue-name"),
	ginkgo.Entry("get", "get", "get", "bert-ft", "-n", goldenNS),
	ginkgo.Entry("describe a finished job", "describe-done", "describe", "llama-done", "-n", goldenNS),
	ginkgo.Entry("get -o json", "get-json", "get", "bert-ft", "-n", goldenNS, "-o", "json"),
	ginkgo.Entry("get -o yaml", "get-yaml", "get", "queued", "-n", goldenNS, "-o", "yaml"),
	ginkgo.Entry("get -o name", "get-name", "get", "bert-ft", "-n", goldenNS, "-o", "name"),
	ginkgo.Entry("get -o jsonpath", "get-jsonpath", "get", "bert-ft", "-n", goldenNS, "-o", `jsonpath={.state} {.progress.percent} {.steps[*].name}`),
	ginkgo.Entry("events", "events", "events", "bert-ft", "-n", goldenNS),
	ginkgo.Entry("events -o json", "events-json", "events", "bert-ft", "-n", goldenNS, "-o", "json"),
	ginkgo.Entry("runtimes list", "runtimes-list", "runtimes", "list", "-n", goldenNS),
	ginkgo.Entry("runtimes list -o wide", "runtimes-list-wide", "runtimes", "list", "-n", goldenNS, "-o", "wide"),
	ginkgo.Entry("runtimes list -o name", "runtimes-list-name", "runtimes", "list", "-n", goldenNS, "-o", "name"),
	ginkgo.Entry("runtimes get: the namespace's first", "runtimes-get-namespaced", "runtimes", "get", "custom", "-n", goldenNS),
	ginkgo.Entry("runtimes get: the cluster's", "runtimes-get-cluster", "runtimes", "get", "torch-cli", "-n", goldenNS),
	ginkgo.Entry("runtimes get -o yaml", "runtimes-get-yaml", "runtimes", "get", "torch-cli", "-o", "yaml"),
)

var _ = ginkgo.DescribeTable("fails with a clear message and its exit code", func(code int, stderr string, args ...string) {
	r := gantry(args...)
	gomega.Expect(r.Stdout).To(gomega.BeEmpty())
	gomega.Expect(r.Stderr).To(gomega.Equal(stderr))
	gomega.Expect(r.Code).To(gomega.Equal(code))
},
	ginkgo.Entry("get a missing job", 4, "error: TrainJob \"nope\" not found in namespace \"team-a\"\n", "get", "nope", "-n", goldenNS),
	ginkgo.Entry("get without a name", 2, "error: give the TrainJob's name\n", "get", "-n", goldenNS),
	ginkgo.Entry("get two names", 2, "error: give one TrainJob name, got 2 arguments: a b\n", "get", "a", "b"),
	ginkgo.Entry("an unknown output", 2, "error: unable to match a printer suitable for the output format \"table\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml\n",
		"get", "bert-ft", "-n", goldenNS, "-o", "table"),
	ginkgo.Entry("an unknown state", 2, "error: --state: unknown state \"done\": want one of Queued, Suspended, Created, Running, Restarting, Complete, Failed\n",
		"list", "--state", "done"),
	ginkgo.Entry("a bad selector", 2, "error: --selector \"a in b\": unable to parse requirement: found 'b' expected: '('\n", "list", "-l", "a in b"),
	ginkgo.Entry("events of a missing job", 4, "error: TrainJob \"nope\" not found in namespace \"team-a\"\n", "events", "nope", "-n", goldenNS),
	ginkgo.Entry("a missing runtime", 4, "error: runtime \"nope\" not found: no TrainingRuntime in namespace \"team-a\" and no ClusterTrainingRuntime\n",
		"runtimes", "get", "nope", "-n", goldenNS),
	ginkgo.Entry("logs of a missing step", 4, "error: TrainJob bert-ft: step \"node-7\" has no pod (steps: dataset-initializer, node-0, node-1)\n",
		"logs", "bert-ft", "--step", "node-7", "-n", goldenNS),
	ginkgo.Entry("logs of a job without pods", 4, "error: TrainJob fresh: step \"node-0\" has no pod\n", "logs", "fresh", "-n", goldenNS),
	ginkgo.Entry("logs -f of a failed job whose step never ran", 1,
		"warning: TrainJob mnist-fail: step \"node-0\" never ran: the TrainJob is Failed\nerror: TrainJob mnist-fail failed: jobset failed: job node-0 reached its backoff limit\n",
		"logs", "mnist-fail", "-f", "-n", goldenNS),
	ginkgo.Entry("logs -f of a completed job without pods", 4, "error: TrainJob llama-done: step \"node-0\" never ran: the TrainJob is Complete\n",
		"logs", "llama-done", "-f", "-n", goldenNS),
	ginkgo.Entry("logs --step and --all", 2, "error: give --step or --all, not both\n", "logs", "bert-ft", "--all", "--step", "node-1"),
	ginkgo.Entry("wait --for nonsense", 2, "error: --for: unknown state \"Done\": want one of Queued, Suspended, Created, Running, Restarting, Complete, Failed (or condition=TYPE)\n",
		"wait", "bert-ft", "--for", "Done"),
	ginkgo.Entry("forbidden", 5, "error: trainjobs.trainer.kubeflow.org is forbidden: User \"nobody\" cannot list resource \"trainjobs\" in API group \"trainer.kubeflow.org\" in the namespace \"team-a\"\n",
		"list", "-n", goldenNS, "--as", "nobody"),
)

var _ = ginkgo.It("prints the client version, then the server's or why not", func() {
	gomega.Expect(gantry("version")).To(gomega.Equal(result{Code: 4, Stdout: "Client Version: devel\n",
		Stderr: "error: reading ConfigMap kubeflow-system/kubeflow-trainer-public: configmaps \"kubeflow-trainer-public\" not found\n"}))
	ns := util.NewNamespace(ctx, k8sClient, "gantry")
	gomega.Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubeflow-trainer-public"},
		Data:       map[string]string{"kubeflow_trainer_version": "v2.3.0"},
	})).To(gomega.Succeed())
	gomega.Expect(gantry("version", "--trainer-namespace", ns)).To(gomega.Equal(result{Stdout: "Client Version: devel\n" +
		"Server Version: v2.3.0 (Kubeflow Trainer API, ConfigMap " + ns + "/kubeflow-trainer-public)\n"}))
})

var _ = ginkgo.It("exits 6 when the API server cannot be reached", func() {
	r := gantry("list", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify")
	gomega.Expect(r.Code).To(gomega.Equal(6), r.Stderr)
	gomega.Expect(r.Stderr).To(gomega.ContainSubstring("connection refused"))
})

var _ = ginkgo.It("completes job, step and runtime names", func() {
	r := gantry("__complete", "logs", "bert-ft", "-n", goldenNS, "--step", "")
	gomega.Expect(lines(r.Stdout)).To(gomega.Equal([]string{"dataset-initializer", "node-0", "node-1", ":4"}))
	r = gantry("__complete", "get", "-n", goldenNS, "b")
	gomega.Expect(lines(r.Stdout)).To(gomega.Equal([]string{"bert-ft", ":4"}))
	r = gantry("__complete", "train", "-n", goldenNS, "--runtime", "")
	gomega.Expect(lines(r.Stdout)).To(gomega.Equal([]string{"custom", "old-torch", "torch-cli", ":4"}))
})
