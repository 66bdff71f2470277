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
	"context"
	"fmt"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// validateKnobChange checks an update that changes only Gantry's annotations (and perhaps
// suspend). The runtime gives the defaults; when it is gone, the TrainJob's own knobs are
// checked alone rather than blocking the update.
func (v *TrainJobValidator) validateKnobChange(ctx context.Context, old, tj *trainer.TrainJob) error {
	var defaults map[string]string
	if rt, _, err := ref.ResolveRuntime(ctx, v.client, tj, ref.SnapshotThenLive); err == nil {
		defaults = knobs.Defaults(rt.GetAnnotations())
	} else if !ref.IsRuntimeNotFound(err) {
		return fmt.Errorf("reading the runtime: %w", err)
	}
	if errs := knobs.ValidateTrainJob(old.Annotations, tj.Annotations, defaults); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}
