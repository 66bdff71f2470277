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

package torch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Models the torchtune runtimes support, as derived from their names.
const (
	llama3_2_1B  = "llama3_2/1B"
	llama3_2_3B  = "llama3_2/3B"
	llama3_3_70B = "llama3_3/70B"
	qwen2_5_1_5B = "qwen2_5/1.5B"
)

var supportedModels = []string{llama3_2_1B, llama3_2_3B, llama3_3_70B, qwen2_5_1_5B}

// immutableConfigs are the torchtune settings the runtime owns (paths into the shared volume);
// they are carried over from the runtime command and a TrainJob may not override them.
var immutableConfigs = []string{"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"}

// isTorchtune reports whether the TrainJob asks for the built-in torchtune trainer.
func isTorchtune(t *trainer.Trainer) bool {
	return t != nil && slices.Equal(t.Command, []string{"tune", "run"})
}

// modelOf derives the torchtune model from a runtime name such as "torchtune-llama3.2-1b":
// "llama3_2/1B". It returns "" for a name of another shape.
func modelOf(runtimeName string) string {
	parts := strings.Split(runtimeName, "-")
	if len(parts) != 3 {
		return ""
	}
	return strings.ReplaceAll(parts[1], ".", "_") + "/" + strings.ToUpper(parts[2])
}

// fineTuning is the kind of fine-tuning the TrainJob's args ask for.
type fineTuning int

const (
	full fineTuning = iota
	lora
	qlora
)

func fineTuningOf(args []string) fineTuning {
	var loraSet, quantize, dora bool
	for _, a := range args {
		loraSet = loraSet || strings.Contains(a, "model.lora_attn_modules")
		if v, ok := strings.CutPrefix(a, "model.quantize_base="); ok {
			quantize, _ = strconv.ParseBool(v)
		}
		if v, ok := strings.CutPrefix(a, "model.use_dora="); ok {
			dora, _ = strconv.ParseBool(v)
		}
	}
	switch {
	case quantize && !dora:
		return qlora
	case loraSet:
		return lora
	default:
		return full
	}
}

// recipe picks the torchtune recipe and config suffix.
func recipe(numNodes int32, singleDevice bool, ft fineTuning) (string, string) {
	switch {
	case numNodes > 1:
		return "full_finetune_distributed", "_full_multinode"
	case singleDevice && ft == lora:
		return "lora_finetune_single_device", "_lora_single_device"
	case singleDevice && ft == qlora:
		return "lora_finetune_single_device", "_qlora_single_device"
	case singleDevice:
		return "full_finetune_single_device", "_full_single_device"
	case ft == qlora:
		return "lora_finetune_distributed", "_qlora"
	case ft == lora:
		return "lora_finetune_distributed", "_lora"
	default:
		return "full_finetune_distributed", "_full"
	}
}

// mutateTorchtuneCommand turns "tune run" into the full torchtune command: rendezvous endpoint
// when more than one process runs, recipe and config for the model, and the runtime's immutable
// configs. The TrainJob's args stay as the container's args.
func mutateTorchtuneCommand(info *runtime.Info, tj *trainer.TrainJob, node *runtime.Container, numNodes int32, nproc string) error {
	model := modelOf(info.RuntimeName)
	if !slices.Contains(supportedModels, model) {
		return fmt.Errorf("torchtune: unsupported model %q derived from runtime %q", model, info.RuntimeName)
	}
	gpus := numGPU(info, tj.Spec.Trainer)
	cmd := []string{"tune", "run"}
	if numNodes > 1 || atoi(nproc) > 1 || (nproc == "auto" && gpus > 1) {
		cmd = append(cmd, fmt.Sprintf("--rdzv_endpoint=%s:%d", info.Endpoint(tj.Name, runtime.NodeContainer, 0, 0), runtime.ContainerPort))
	}
	singleDevice := nproc == "1" || gpus == 1
	r, suffix := recipe(numNodes, singleDevice, fineTuningOf(tj.Spec.Trainer.Args))
	cmd = append(cmd, r, "--config", model+suffix)
	for _, item := range runtimeNodeCommand(info) {
		if slices.Contains(immutableConfigs, configKey(item)) {
			cmd = append(cmd, item)
		}
	}
	node.Command = cmd
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func configKey(item string) string {
	k, _, _ := strings.Cut(item, "=")
	return k
}

// numGPU is the GPU count per node: the TrainJob's resourcesPerNode, else the runtime's.
func numGPU(info *runtime.Info, t *trainer.Trainer) int64 {
	if t != nil && t.ResourcesPerNode != nil {
		return runtime.NumGPU(*t.ResourcesPerNode)
	}
	return runtime.NumGPU(runtimeNodeResources(info))
}

func runtimeNodeCommand(info *runtime.Info) []string {
	if _, c := trainjob.TrainerNode(&info.RuntimeSpec.Template.Spec); c != nil {
		return c.Command
	}
	return nil
}

// validateTorchtune checks that the runtime's model is supported and that the TrainJob asks for a
// combination torchtune can run.
func validateTorchtune(info *runtime.Info, tj *trainer.TrainJob) field.ErrorList {
	t := tj.Spec.Trainer
	if !isTorchtune(t) {
		return nil
	}
	path := field.NewPath("spec", "trainer")
	model := modelOf(info.RuntimeName)
	if !slices.Contains(supportedModels, model) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef", "name"), info.RuntimeName,
			fmt.Sprintf("must have a supported pretrained model, invalid model configured: %s", model))}
	}
	var errs field.ErrorList
	numNodes := info.TrainerNumNodes(tj)
	if numNodes > 1 && model != llama3_3_70B {
		errs = append(errs, field.Invalid(path.Child("numNodes"), numNodes, fmt.Sprintf("must be 1 for %s model", model)))
	}
	ft := fineTuningOf(t.Args)
	if ft != full && numNodes > 1 {
		errs = append(errs, field.Invalid(path.Child("numNodes"), numNodes,
			"LoRA fine-tuning is not supported for multi-node training in TorchTune"))
	}
	if ft == qlora {
		errs = append(errs, validateQLoRA(info, t, model, path)...)
	}
	for i, a := range t.Args {
		if k := configKey(a); slices.Contains(immutableConfigs, k) {
			errs = append(errs, field.Invalid(path.Child("args").Index(i), a,
				fmt.Sprintf("must not set immutable config %q in trainer args; it is managed by the runtime", k)))
		}
	}
	return errs
}

func validateQLoRA(info *runtime.Info, t *trainer.Trainer, model string, path *field.Path) field.ErrorList {
	switch model {
	case qwen2_5_1_5B:
		return field.ErrorList{field.Invalid(path.Child("args"), t.Args, fmt.Sprintf("QLoRA is not supported for %s model", model))}
	case llama3_2_1B, llama3_2_3B:
		var errs field.ErrorList
		if n := ptr.Deref(t.NumProcPerNode, 1); n != 1 {
			errs = append(errs, field.Invalid(path.Child("numProcPerNode"), n,
				fmt.Sprintf("must be auto or 1 for %s model when using QLoRA", model)))
		}
		if gpus := numGPU(info, t); gpus > 1 {
			errs = append(errs, field.Invalid(path.Child("resourcesPerNode"), gpus,
				fmt.Sprintf("must have gpu resource with value 1 for %s model when using QLoRA", model)))
		}
		return errs
	default:
		return nil
	}
}
