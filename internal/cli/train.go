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
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

type trainOptions struct {
	*Options
	out          *outputFlags
	file         string
	name         string
	generateName string
	runtime      string
	image        string
	nodes        int32
	gpus         int64
	gpuResource  string
	env          []string
	queue        string
	dryRun       string
	wait         bool
	follow       bool
	timeout      time.Duration
	command      []string
}

func newTrainCommand(o *Options) *cobra.Command {
	t := &trainOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "train (-f FILE | --runtime R [--image I] [--nodes N] [--gpus-per-node G] [--env K=V]... [-- COMMAND ARG...])",
		Short: "Submit a TrainJob from a file or from flags; optionally wait for it or follow its logs",
		Long: `Submit a TrainJob, from a YAML file (-f) or from flags. Without --name the job gets a name
like the Kubeflow Python SDK's (a letter and 11 hex digits).

--dry-run=client prints what the controller would create for it (the objects of "gantry render"),
reading the runtime from the file, else the cluster, else the runtimes Gantry ships.
--dry-run=server has the API server admit it without creating it.
--wait waits for it to end; --follow streams rank 0's log (step node-0) until it ends. Both exit
with the job's result: 0 Complete, 1 Failed (3 after --timeout).

` + ExitCodesHelp,
		Example: `  gantry train -f job.yaml --wait
  gantry train --runtime torch-distributed --image pytorch/pytorch:2.7.1 --nodes 2 --gpus-per-node 1 \
      --env EPOCHS=3 -- python train.py --lr 0.01
  gantry train -f job.yaml --dry-run=client`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return usageErrorf("put the training command after --, e.g. gantry train --runtime R -- python train.py")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			t.command = args
			return t.run(cmd.Context(), cmd)
		},
	}
	t.out = addOutputFlags(cmd, false)
	f := cmd.Flags()
	f.StringVarP(&t.file, "filename", "f", "", `A YAML file with the TrainJob ("-" reads standard input); it may hold the runtime too, for --dry-run=client.`)
	f.StringVar(&t.name, "name", "", "The TrainJob's name (overrides the file's).")
	f.StringVar(&t.generateName, "generate-name", "", "A name prefix; the API server adds 5 random characters.")
	f.StringVar(&t.runtime, "runtime", "", "The runtime: the namespace's TrainingRuntime of that name, else the ClusterTrainingRuntime.")
	f.StringVar(&t.image, "image", "", "The trainer's image (default: the runtime's).")
	f.Int32Var(&t.nodes, "nodes", 0, "Training nodes (default: the runtime's).")
	f.Int64Var(&t.gpus, "gpus-per-node", 0, "GPUs per node, as resource limits of --gpu-resource.")
	f.StringVar(&t.gpuResource, "gpu-resource", "nvidia.com/gpu", "The extended resource --gpus-per-node asks for.")
	f.StringArrayVar(&t.env, "env", nil, "An environment variable of the trainer, K=V (repeatable).")
	f.StringVar(&t.queue, "queue", "", "Submit through Kueue: the LocalQueue (label kueue.x-k8s.io/queue-name).")
	f.StringVar(&t.dryRun, "dry-run", "none", `"client" prints the objects the controller would create; "server" has the API server admit the job without creating it.`)
	f.Lookup("dry-run").NoOptDefVal = "client"
	f.BoolVar(&t.wait, "wait", false, "Wait for the TrainJob to end; exit 0 Complete, 1 Failed.")
	f.BoolVar(&t.follow, "follow", false, "Stream rank 0's log until the TrainJob ends; exit 0 Complete, 1 Failed.")
	f.DurationVar(&t.timeout, "timeout", 0, "With --wait or --follow, give up after this long (exit code 3); 0 waits forever.")
	_ = cmd.RegisterFlagCompletionFunc("runtime", o.completeRuntimes)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (t *trainOptions) validate() error {
	switch {
	case t.file == "" && t.runtime == "":
		return usageErrorf("give -f FILE or --runtime NAME")
	case t.file != "" && (t.runtime != "" || t.image != "" || t.nodes != 0 || t.gpus != 0 || len(t.env) > 0 || len(t.command) > 0):
		return usageErrorf("give -f FILE or the job flags (--runtime, --image, --nodes, --gpus-per-node, --env, -- COMMAND), not both")
	case t.name != "" && t.generateName != "":
		return usageErrorf("give --name or --generate-name, not both")
	case t.nodes < 0:
		return usageErrorf("--nodes must be at least 1, got %d", t.nodes)
	case t.gpus < 0:
		return usageErrorf("--gpus-per-node must not be negative, got %d", t.gpus)
	case t.dryRun != "none" && t.dryRun != "client" && t.dryRun != "server":
		return usageErrorf(`--dry-run must be "none", "client" or "server", got %q`, t.dryRun)
	case t.dryRun != "none" && (t.wait || t.follow):
		return usageErrorf("--wait and --follow need a TrainJob that runs: leave out --dry-run")
	case t.wait && t.follow:
		return usageErrorf("give --wait or --follow, not both (--follow waits too)")
	}
	for _, kv := range t.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageErrorf("--env %q: want NAME=VALUE", kv)
		}
	}
	return nil
}

func (t *trainOptions) run(ctx context.Context, cmd *cobra.Command) error {
	if err := t.validate(); err != nil {
		return err
	}
	ns, err := t.Namespace()
	if err != nil {
		return err
	}
	tj, extra, err := t.trainJob(ctx, cmd, ns)
	if err != nil {
		return err
	}
	if t.dryRun == "client" {
		return t.render(ctx, tj, extra)
	}
	r, err := t.Reader()
	if err != nil {
		return err
	}
	var opts []client.CreateOption
	opts = append(opts, client.FieldValidation(metav1.FieldValidationStrict))
	if t.dryRun == "server" {
		opts = append(opts, client.DryRunAll)
	}
	if err := r.Client.Create(ctx, tj, opts...); err != nil {
		return fmt.Errorf("creating TrainJob %s: %w", displayName(tj), err)
	}
	if err := t.report(tj); err != nil {
		return err
	}
	switch {
	case t.wait:
		_, err := t.waitFor(ctx, ns, tj.GetName(), t.timeout, "Complete", target{state: trainjob.StateComplete}.reached)
		return err
	case t.follow:
		if t.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t.timeout)
			defer cancel()
		}
		err := t.Options.follow(ctx, ns, tj.GetName(), jobview.LogOptions{Step: "node-0", Follow: true, PodTimeout: 0})
		if errors.Is(err, context.DeadlineExceeded) {
			return withCode(ExitTimeout, fmt.Errorf("timed out after %s following TrainJob %s", t.timeout, tj.GetName()))
		}
		return err
	}
	return nil
}

func displayName(tj *unstructured.Unstructured) string {
	if tj.GetName() != "" {
		return tj.GetName()
	}
	return tj.GetGenerateName() + "*"
}

func (t *trainOptions) report(tj *unstructured.Unstructured) error {
	if !t.out.table() {
		tj.SetManagedFields(nil)
		return t.out.printDocument(t.Streams.Out, tj.Object, []string{"trainjob.trainer.kubeflow.org/" + tj.GetName()})
	}
	suffix := ""
	if t.dryRun == "server" {
		suffix = " (server dry run)"
	}
	_, err := fmt.Fprintf(t.Streams.Out, "trainjob.trainer.kubeflow.org/%s created%s\n", tj.GetName(), suffix)
	return err
}

// trainJob builds the TrainJob to create, as unstructured data so the API server's strict field
// validation names a misspelt field of the file. extra are the file's other documents.
func (t *trainOptions) trainJob(ctx context.Context, cmd *cobra.Command, ns string) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	var tj *unstructured.Unstructured
	var extra []*unstructured.Unstructured
	if t.file != "" {
		docs, err := readDocuments(t.file, t.Streams.In)
		if err != nil {
			return nil, nil, withCode(ExitUsage, err)
		}
		for _, d := range docs {
			if d.GetKind() != trainer.TrainJobKind {
				extra = append(extra, d)
				continue
			}
			if tj != nil {
				return nil, nil, usageErrorf("%s holds more than one TrainJob; give one per train", t.file)
			}
			tj = d
		}
		if tj == nil {
			return nil, nil, usageErrorf("%s holds no TrainJob (kind: TrainJob, apiVersion: %s)", t.file, trainer.GroupVersion)
		}
		if tj.GetAPIVersion() != trainer.GroupVersion.String() {
			return nil, nil, usageErrorf("%s: TrainJob has apiVersion %q, want %s", t.file, tj.GetAPIVersion(), trainer.GroupVersion)
		}
	} else {
		var err error
		if tj, err = t.fromFlags(ctx); err != nil {
			return nil, nil, err
		}
	}
	if tj.GetNamespace() != "" && tj.GetNamespace() != ns && cmd.Flags().Changed("namespace") {
		return nil, nil, usageErrorf("the TrainJob's namespace %q differs from -n %s", tj.GetNamespace(), ns)
	}
	if tj.GetNamespace() == "" {
		tj.SetNamespace(ns)
	}
	switch {
	case t.name != "":
		tj.SetName(t.name)
		tj.SetGenerateName("")
	case t.generateName != "":
		tj.SetName("")
		tj.SetGenerateName(t.generateName)
	case tj.GetName() == "" && tj.GetGenerateName() == "":
		tj.SetName(sdkName())
	}
	if t.queue != "" {
		labels := tj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[trainjob.QueueLabel] = t.queue
		tj.SetLabels(labels)
	}
	return tj, extra, nil
}

// sdkName is a name as the Kubeflow Python SDK makes them: a letter, then 11 hex digits.
func sdkName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	first := "abcdefghijklmnopqrstuvwxyz"[int(b[0])%26]
	return string(first) + hex.EncodeToString(b)[1:]
}

func (t *trainOptions) fromFlags(ctx context.Context) (*unstructured.Unstructured, error) {
	kind := trainer.ClusterTrainingRuntimeKind
	if t.dryRun != "client" || t.cfgAvailable() {
		ns, err := t.Namespace()
		if err != nil {
			return nil, err
		}
		r, err := t.Reader()
		if err != nil {
			return nil, err
		}
		rt, _, err := r.GetRuntime(ctx, ns, t.runtime)
		switch {
		case err == nil:
			kind = rt.Kind
		case t.dryRun != "client":
			return nil, runtimeNotFound(err, ns, t.runtime)
		}
	}
	tr := &trainer.Trainer{}
	if t.image != "" {
		tr.Image = &t.image
	}
	if len(t.command) > 0 {
		tr.Command = t.command
	}
	if t.nodes > 0 {
		tr.NumNodes = &t.nodes
	}
	if t.gpus > 0 {
		q := *resource.NewQuantity(t.gpus, resource.DecimalSI)
		tr.ResourcesPerNode = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(t.gpuResource): q}}
	}
	for _, kv := range t.env {
		k, v, _ := strings.Cut(kv, "=")
		tr.Env = append(tr.Env, corev1.EnvVar{Name: k, Value: v})
	}
	tj := &trainer.TrainJob{
		TypeMeta: metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: t.runtime, APIGroup: ptr.To(trainer.GroupVersion.Group), Kind: ptr.To(kind)},
			Trainer:    tr,
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

// cfgAvailable: a client dry run uses the cluster's runtime when there is a cluster.
func (t *trainOptions) cfgAvailable() bool {
	_, err := t.ConfigFlags.ToRESTConfig()
	return err == nil
}

// readDocuments decodes every YAML or JSON document of a file ("-" is standard input).
func readDocuments(path string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return decodeDocuments(path, data)
}

func decodeDocuments(path string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// toYAML is one document of a render input.
func toYAML(obj any) ([]byte, error) { return yaml.Marshal(obj) }
