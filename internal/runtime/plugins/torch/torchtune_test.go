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
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestModelOf(t *testing.T) {
	cases := map[string]string{
		"torchtune-llama3.2-1b":    "llama3_2/1B",
		"torchtune-llama3.2-3b":    "llama3_2/3B",
		"torchtune-qwen2.5-1.5b":   "qwen2_5/1.5B",
		"torchtune-llama3.3-70b":   "llama3_3/70B",
		"torch-distributed":        "",
		"my-torchtune-llama3.2-1b": "",
	}
	for name, want := range cases {
		if diff := cmp.Diff(want, modelOf(name)); diff != "" {
			t.Errorf("modelOf(%q) (-want,+got):\n%s", name, diff)
		}
	}
}

func TestRecipe(t *testing.T) {
	cases := map[string]struct {
		numNodes     int32
		singleDevice bool
		args         []string
		wantRecipe   string
		wantSuffix   string
	}{
		"single device":              {1, true, nil, "full_finetune_single_device", "_full_single_device"},
		"single device LoRA":         {1, true, []string{"model.lora_attn_modules=[q_proj]"}, "lora_finetune_single_device", "_lora_single_device"},
		"single device QLoRA":        {1, true, []string{"model.quantize_base=True"}, "lora_finetune_single_device", "_qlora_single_device"},
		"multi device QLoRA":         {1, false, []string{"model.lora_attn_modules=[q_proj]", "model.quantize_base=true"}, "lora_finetune_distributed", "_qlora"},
		"multi device LoRA":          {1, false, []string{"model.lora_attn_modules=[q_proj]"}, "lora_finetune_distributed", "_lora"},
		"multi device DoRA is LoRA":  {1, false, []string{"model.lora_attn_modules=[q_proj]", "model.use_dora=True", "model.quantize_base=True"}, "lora_finetune_distributed", "_lora"},
		"quantize_base=false is not": {1, false, []string{"model.quantize_base=false"}, "full_finetune_distributed", "_full"},
		"multi device":               {1, false, nil, "full_finetune_distributed", "_full"},
		"multi node":                 {4, false, nil, "full_finetune_distributed", "_full_multinode"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, s := recipe(tc.numNodes, tc.singleDevice, fineTuningOf(tc.args))
			if diff := cmp.Diff([]string{tc.wantRecipe, tc.wantSuffix}, []string{r, s}); diff != "" {
				t.Errorf("recipe (-want,+got):\n%s", diff)
			}
		})
	}
}
