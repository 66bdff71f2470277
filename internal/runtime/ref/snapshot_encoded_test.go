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

package ref

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// A stored runtime version is encoded once and its bytes shared; another version, or a runtime
// not read from the API (no UID or resourceVersion: the command line's files), is encoded anew
// and says what it holds; the oldest versions are forgotten past the bound.
func TestRuntimeYAMLOncePerVersion(t *testing.T) {
	encoded = &encodedRuntimes{yaml: map[runtimeVersion]string{}}
	runtime := func(uid types.UID, rv, image string) *trainer.ClusterTrainingRuntime {
		rt := utiltesting.MakeClusterTrainingRuntimeWrapper("torch").
			Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		rt.UID, rt.ResourceVersion = uid, rv
		rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = image
		return rt
	}
	encode := func(rt *trainer.ClusterTrainingRuntime) string {
		t.Helper()
		data, err := runtimeYAML(rt)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	contains := strings.Contains

	first := encode(runtime("u1", "10", "image:a"))
	again := encode(runtime("u1", "10", "image:a"))
	edited := encode(runtime("u1", "11", "image:b"))
	file1 := encode(runtime("", "", "image:c"))
	file2 := encode(runtime("", "", "image:d"))
	for i := range encodedVersions {
		encode(runtime(types.UID(fmt.Sprintf("other-%d", i)), "1", "image:e"))
	}
	evicted := encode(runtime("u1", "10", "image:a"))

	got := map[string]bool{
		"the same version shares its bytes":         same(first, again),
		"an edited runtime is encoded anew":         !same(first, edited) && contains(edited, "image:b"),
		"files are not remembered":                  contains(file1, "image:c") && contains(file2, "image:d"),
		"an evicted version is encoded again":       !same(first, evicted) && first == evicted,
		"no more versions kept than the bound":      len(encoded.yaml) == encodedVersions && len(encoded.oldest) == encodedVersions,
		"the snapshot still has the runtime's kind": contains(first, "kind: ClusterTrainingRuntime"),
	}
	want := map[string]bool{}
	for k := range got {
		want[k] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runtimeYAML (-want,+got):\n%s", diff)
	}
}
