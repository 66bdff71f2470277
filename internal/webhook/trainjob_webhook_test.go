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

package webhook

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// A runtime applied together with its TrainJob may be missing from the cache when the TrainJob
// arrives: the validator asks the apiserver before it refuses.
func TestValidateCreateReadsUncachedWhenTheCacheMisses(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := render.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	runtimeObj := utiltesting.MakeTrainingRuntimeWrapper("ns", "torch").Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
	empty := fake.NewClientBuilder().WithScheme(s).Build()
	withRuntime := fake.NewClientBuilder().WithScheme(s).WithObjects(runtimeObj).Build()
	for _, tc := range []struct {
		name      string
		cache     client.Client
		apiReader client.Reader
		wantErr   string
	}{
		{name: "in the cache", cache: withRuntime, apiReader: empty},
		{name: "not yet in the cache", cache: empty, apiReader: withRuntime},
		{name: "nowhere", cache: empty, apiReader: empty,
			wantErr: `spec.runtimeRef: Not found: "torch: specified trainingRuntime must be created before the TrainJob is created"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &TrainJobValidator{client: tc.cache, apiReader: tc.apiReader, runtime: rt}
			_, err := v.ValidateCreate(t.Context(), tj.DeepCopy())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ValidateCreate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ValidateCreate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
