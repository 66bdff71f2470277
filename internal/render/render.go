package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	gruntime "github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
)

// NewRuntime returns a Runtime with the built-in plugins.
func NewRuntime() (*core.Runtime, error) {
	return plugins.NewRuntime(framework.Options{})
}

// Objects renders every object the controller would apply for the input's TrainJob, in apply
// order: the runtime snapshot, then each plugin's objects in registry order.
func Objects(ctx context.Context, rt *core.Runtime, in *Input) ([]*unstructured.Unstructured, error) {
	objs, err := rt.NewObjects(ctx, in.TrainJob, in.Runtime)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if o.Complete != nil {
			if err := o.Complete(); err != nil {
				return nil, err
			}
		}
		u, err := gruntime.ToUnstructured(o.Object)
		if err != nil {
			return nil, fmt.Errorf("converting %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		out = append(out, &unstructured.Unstructured{Object: u})
	}
	return out, nil
}

// WriteYAML writes objs as a multi-document YAML stream.
func WriteYAML(w io.Writer, objs []*unstructured.Unstructured) error {
	var buf bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		buf.Write(data)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Validate runs what admission would on the input as a create: the CRD schemas and CEL rules of
// the TrainJob and its runtime, then the plugins' checks.
func Validate(ctx context.Context, rt *core.Runtime, in *Input) (admission.Warnings, field.ErrorList) {
	var errs field.ErrorList
	for _, d := range []*Document{in.RuntimeDocument, in.TrainJobDocument} {
		errs = append(errs, in.Schemas.Validate(ctx, d.Object.GroupVersionKind(), d.Object.Object)...)
	}
	errs = append(errs, core.ValidateRuntime(in.Runtime)...)
	warnings, pluginErrs := rt.ValidateObjects(nil, in.TrainJob, in.Runtime, nil)
	errs = append(errs, pluginErrs...)
	warnings = append(core.TrainJobWarnings(in.Runtime), warnings...)
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		switch {
		case a.Field < b.Field:
			return -1
		case a.Field > b.Field:
			return 1
		}
		return 0
	})
	return warnings, errs
}
