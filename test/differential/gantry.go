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

package differential

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/crdschema"
	"github.com/gantry-ml/gantry/internal/render"
	gruntime "github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// Gantry admits objects as a cluster running Gantry does: its CRDs' schemas and CEL rules,
// then its webhooks' checks (the same code `gantry render` runs before rendering).
type Gantry struct {
	schemas *crdschema.Schemas
	runtime *core.Runtime
	// builder builds with progress reporting off, as Kubeflow Trainer's default configuration
	// does (its TrainJobStatus gate is an alpha, off), so builds compare like for like.
	builder *core.Runtime
}

// NewGantry loads Gantry's CRDs and builds its runtime with the built-in plugins.
func NewGantry() (*Gantry, error) {
	schemas, err := crdschema.Load(crd.Bases)
	if err != nil {
		return nil, err
	}
	rt, err := render.NewRuntime()
	if err != nil {
		return nil, err
	}
	builder, err := render.NewRuntimeWithStatus(false)
	if err != nil {
		return nil, err
	}
	return &Gantry{schemas: schemas, runtime: rt, builder: builder}, nil
}

// AdmitRuntime returns Gantry's refusals of a runtime create.
func (g *Gantry) AdmitRuntime(ctx context.Context, obj map[string]any) field.ErrorList {
	if errs := schemaErrors(ctx, g.schemas, obj); len(errs) > 0 {
		return errs
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	shape, err := core.RuntimeShapeOf(raw)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if errs := core.ValidateRuntimeShape(shape); len(errs) > 0 {
		return errs
	}
	rt, err := typedRuntime(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return core.ValidateRuntime(rt, nil)
}

// AdmitTrainJob returns Gantry's refusals of a TrainJob create, with rt (an admitted runtime) in
// the cluster.
func (g *Gantry) AdmitTrainJob(ctx context.Context, rtObj, tjObj map[string]any) field.ErrorList {
	if errs := schemaErrors(ctx, g.schemas, tjObj); len(errs) > 0 {
		return errs
	}
	tj := &trainer.TrainJob{}
	if err := convert(tjObj, tj); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	rt, err := typedRuntime(rtObj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if err := ref.CheckSupported(tj); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), tj.Spec.RuntimeRef, err.Error())}
	}
	if errs := core.ValidateTrainJob(nil, tj); len(errs) > 0 {
		return errs
	}
	_, errs := g.runtime.ValidateObjects(nil, tj, rt, &gruntime.Observed{})
	return errs
}

// Objects are the objects Gantry's controller applies for tjObj (an admitted TrainJob) over
// rtObj, in apply order, as JSON objects: the runtime snapshot, then each plugin's objects.
// Progress reporting is off, as in Kubeflow Trainer's default configuration.
func (g *Gantry) Objects(ctx context.Context, rtObj, tjObj map[string]any) ([]map[string]any, error) {
	tj := &trainer.TrainJob{}
	if err := convert(tjObj, tj); err != nil {
		return nil, err
	}
	rt, err := typedRuntime(rtObj)
	if err != nil {
		return nil, err
	}
	build, err := g.builder.NewObjects(ctx, tj, rt, &gruntime.Observed{})
	if err != nil {
		return nil, err
	}
	objs := make([]map[string]any, 0, len(build.Objects))
	for _, o := range build.Objects {
		if o.Complete != nil {
			if err := o.Complete(); err != nil {
				return nil, err
			}
		}
		u, err := apply.ToUnstructured(o.Object)
		if err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

func typedRuntime(obj map[string]any) (client.Object, error) {
	var rt client.Object
	switch obj["kind"] {
	case trainer.TrainingRuntimeKind:
		rt = &trainer.TrainingRuntime{}
	case trainer.ClusterTrainingRuntimeKind:
		rt = &trainer.ClusterTrainingRuntime{}
	default:
		return nil, fmt.Errorf("not a runtime: %v", obj["kind"])
	}
	return rt, convert(obj, rt)
}

func gvkOf(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}
