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

package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/features"
	gruntime "github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// PlaceholderCA stands in, in the rendered gantry-status-server-ca ConfigMap, for the CA the
// controller copies from the webhook certificate Secret of the default install.
const PlaceholderCA = "<ca.crt of Secret " + OperatorNamespace + "/" + configapi.DefaultWebhookSecretName + ">\n"

// OperatorNamespace is the namespace of the default install, where the rendered status server
// URL points.
const OperatorNamespace = "kubeflow-system"

// NewRuntime returns a Runtime with the built-in plugins. With the TrainJobStatus gate on, the
// trainer pods get the status server of the default install: the manager's Service
// kubeflow-trainer-controller-manager in kubeflow-system, port 10443.
func NewRuntime() (*core.Runtime, error) {
	return NewRuntimeWithStatus(features.Enabled(features.TrainJobStatus))
}

// NewRuntimeWithStatus is NewRuntime with the TrainJobStatus plugin on or off, whatever the gate.
func NewRuntimeWithStatus(trainJobStatus bool) (*core.Runtime, error) {
	var opts framework.Options
	if trainJobStatus {
		opts.StatusServerURL = trainjobstatus.URL(configapi.DefaultWebhookServiceName, OperatorNamespace, configapi.DefaultStatusServerPort)
	}
	return plugins.NewRuntime(opts)
}

// Observed is what the cluster would provide to a build: the status server CA ca (no
// LimitRanges or RuntimeClasses).
func Observed(ca string) *gruntime.Observed {
	return &gruntime.Observed{StatusServerCA: ca}
}

// Objects renders every object the controller would apply for the input's TrainJob, in apply
// order: the runtime snapshot, then each plugin's objects in registry order.
func Objects(ctx context.Context, rt *core.Runtime, in *Input) ([]*unstructured.Unstructured, error) {
	build, err := rt.NewObjects(ctx, in.TrainJob, in.Runtime, Observed(in.StatusServerCA))
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(build.Objects))
	for _, o := range build.Objects {
		if o.Complete != nil {
			if err := o.Complete(); err != nil {
				return nil, err
			}
		}
		u, err := apply.ToUnstructured(o.Object)
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
		data, err := MarshalDocument(o.Object)
		if err != nil {
			return err
		}
		buf.Write(data)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// MarshalDocument writes obj as a YAML document. A string the YAML emitter refuses (one with
// DEL or another control character the apiserver accepts) makes the document indented JSON,
// which is YAML too, so every object the controller would apply can be printed.
func MarshalDocument(obj any) ([]byte, error) {
	data, err := yaml.Marshal(obj)
	if err == nil {
		return data, nil
	}
	data, jerr := json.MarshalIndent(obj, "", "  ")
	if jerr != nil {
		return nil, fmt.Errorf("%w; as JSON: %w", err, jerr)
	}
	return append(escapeNonPrintable(data), '\n'), nil
}

// escapeNonPrintable writes every character YAML does not allow in a stream, or reads as a line
// break inside a quoted string (NEL, the Unicode line and paragraph separators), as a \u escape;
// encoding/json leaves them as they are. Such characters only occur inside JSON strings, where
// the escape means the same character.
func escapeNonPrintable(data []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(data) {
		if yamlPrintable(r) && r != 0x85 && r != 0x2028 && r != 0x2029 {
			out.WriteRune(r)
			continue
		}
		fmt.Fprintf(&out, "\\u%04x", r)
	}
	return out.Bytes()
}

// yamlPrintable is YAML's printable character set.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd:
		return r != 0xfeff
	default:
		return r >= 0x10000 && r <= 0x10ffff
	}
}

// runtimeShape is the webhook's check that the runtime has a spec and a template, which its
// typed form cannot tell (core.RuntimeShapeOf).
func runtimeShape(d *Document) field.ErrorList {
	raw, err := d.Object.MarshalJSON()
	if err == nil {
		var shape core.RuntimeShape
		if shape, err = core.RuntimeShapeOf(raw); err == nil {
			return core.ValidateRuntimeShape(shape)
		}
	}
	return field.ErrorList{field.InternalError(nil, err)}
}

// Validate runs what admission would on the input as a create: the CRD schemas and CEL rules of
// the TrainJob and its runtime, then the webhooks' and the plugins' checks.
func Validate(ctx context.Context, rt *core.Runtime, in *Input) (admission.Warnings, field.ErrorList) {
	var errs field.ErrorList
	for _, d := range []*Document{in.RuntimeDocument, in.TrainJobDocument} {
		errs = append(errs, in.Schemas.Validate(ctx, d.Object.GroupVersionKind(), d.Object.Object)...)
	}
	if shapeErrs := runtimeShape(in.RuntimeDocument); len(shapeErrs) > 0 {
		errs = append(errs, shapeErrs...)
	} else {
		errs = append(errs, core.ValidateRuntime(in.Runtime, nil)...)
	}
	errs = append(errs, core.ValidateTrainJob(nil, in.TrainJob)...)
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
