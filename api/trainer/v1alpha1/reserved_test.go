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

package v1alpha1

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReservedNames keeps the names Kubeflow Trainer is about to ship free, so that when it does,
// Gantry can take them with upstream's meaning: a Gantry-only field under one of them would
// clash (README, Compatibility promise). Gantry-only knobs are annotations.
func TestReservedNames(t *testing.T) {
	cases := map[string]struct {
		typ      reflect.Type
		reserved []string
	}{
		// kubeflow/trainer#4052.
		"TrainJob spec":        {reflect.TypeFor[TrainJobSpec](), []string{"ttlSecondsAfterFinished"}},
		"TrainJob status":      {reflect.TypeFor[TrainJobStatus](), []string{"startTime", "completionTime"}},
		"TrainingRuntime spec": {reflect.TypeFor[TrainingRuntimeSpec](), []string{"runPolicy", "ttlSecondsAfterFinished"}},
		// kubeflow/trainer#4027.
		"TrainJob spec.trainer": {reflect.TypeFor[Trainer](), []string{"resourceClaimsPerNode"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var taken []string
			for f := range tc.typ.Fields() {
				json, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				for _, r := range tc.reserved {
					if json == r {
						taken = append(taken, r)
					}
				}
			}
			if diff := cmp.Diff([]string(nil), taken); diff != "" {
				t.Errorf("fields under names reserved for upstream (-want,+got):\n%s", diff)
			}
		})
	}
}
