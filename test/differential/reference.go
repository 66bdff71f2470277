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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing/fstest"

	refconfig "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	reftrainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	refruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
	refcore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	refwebhooks "github.com/kubeflow/trainer/v2/pkg/webhooks"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/crdschema"
	"github.com/gantry-ml/gantry/test/util"
)

// referenceModule is Kubeflow Trainer's module; go.mod pins the version the differential
// compares against.
const referenceModule = "github.com/kubeflow/trainer/v2"

// Reference admits objects as a Kubeflow Trainer v2.3.0 cluster does: its CRDs' schemas and CEL
// rules (read from the module), then its webhooks' code.
type Reference struct {
	schemas  *crdschema.Schemas
	scheme   *runtime.Scheme
	client   *swapClient
	runtimes map[string]refruntime.Runtime
}

// swapClient lets the reference's runtimes, built once, read the runtime of each case.
type swapClient struct{ client.Client }

// noIndexer satisfies the reference's field index setup; validation never lists by index.
type noIndexer struct{}

func (noIndexer) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

// NewReference loads the reference's CRDs and builds its runtimes.
func NewReference(ctx context.Context) (*Reference, error) {
	_, file, _, _ := goruntime.Caller(0)
	dir, err := util.ModuleDirIn(filepath.Dir(file), referenceModule)
	if err != nil {
		return nil, err
	}
	schemas, err := loadCRDs(filepath.Join(dir, "manifests", "base", "crds"))
	if err != nil {
		return nil, fmt.Errorf("loading the reference CRDs: %w", err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, reftrainer.AddToScheme, jobsetv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	cfg := &refconfig.Configuration{}
	refconfig.SetDefaults_Configuration(cfg)
	sc := &swapClient{Client: fake.NewClientBuilder().WithScheme(scheme).Build()}
	runtimes, err := refcore.New(ctx, sc, noIndexer{}, cfg)
	if err != nil {
		return nil, fmt.Errorf("building the reference runtimes: %w", err)
	}
	return &Reference{schemas: schemas, scheme: scheme, client: sc, runtimes: runtimes}, nil
}

// AdmitRuntime returns the reference's refusals of a runtime create: schema, then webhook.
func (r *Reference) AdmitRuntime(ctx context.Context, obj map[string]any) (errs field.ErrorList, crashed error) {
	defer recoverInto(&crashed)
	if errs := schemaErrors(ctx, r.schemas, obj); len(errs) > 0 {
		return errs, nil
	}
	switch obj["kind"] {
	case reftrainer.TrainingRuntimeKind:
		rt := &reftrainer.TrainingRuntime{}
		if err := convert(obj, rt); err != nil {
			return nil, err
		}
		_, err := (&refwebhooks.TrainingRuntimeValidator{}).ValidateCreate(ctx, rt)
		return fieldErrors(err), nil
	default:
		rt := &reftrainer.ClusterTrainingRuntime{}
		if err := convert(obj, rt); err != nil {
			return nil, err
		}
		_, err := (&refwebhooks.ClusterTrainingRuntimeValidator{}).ValidateCreate(ctx, rt)
		return fieldErrors(err), nil
	}
}

// AdmitTrainJob returns the reference's refusals of a TrainJob create, with rt (an admitted
// runtime) in the cluster.
func (r *Reference) AdmitTrainJob(ctx context.Context, rtObj, tjObj map[string]any) (errs field.ErrorList, crashed error) {
	defer recoverInto(&crashed)
	if errs := schemaErrors(ctx, r.schemas, tjObj); len(errs) > 0 {
		return errs, nil
	}
	tj, run, err := r.load(rtObj, tjObj)
	if err != nil {
		return nil, err
	}
	if run == nil {
		key := refruntime.RuntimeRefToRuntimeRegistryKey(tj.Spec.RuntimeRef)
		return field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), key, "unsupported runtime")}, nil
	}
	_, errs = run.ValidateObjects(ctx, nil, tj)
	return errs, nil
}

// Objects are the objects the reference's controller applies for tjObj (an admitted TrainJob, its
// schema defaults applied, its uid set as the apiserver sets it) over rtObj: its runtime's
// NewObjects, as its reconciler calls them, as JSON objects.
func (r *Reference) Objects(ctx context.Context, rtObj, tjObj map[string]any) (objs []map[string]any, err error) {
	defer recoverInto(&err)
	tj, run, err := r.load(rtObj, tjObj)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, fmt.Errorf("unsupported runtime %v", tj.Spec.RuntimeRef)
	}
	acs, err := run.NewObjects(ctx, tj)
	if err != nil {
		return nil, err
	}
	for _, ac := range acs {
		obj := map[string]any{}
		if err := convert(ac, &obj); err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// load decodes a case's TrainJob and runtime into the reference's types, puts the runtime where
// the reference's runtimes read it, and returns the runtime the TrainJob names (nil when the
// reference has none of that kind).
func (r *Reference) load(rtObj, tjObj map[string]any) (*reftrainer.TrainJob, refruntime.Runtime, error) {
	tj := &reftrainer.TrainJob{}
	if err := convert(tjObj, tj); err != nil {
		return nil, nil, err
	}
	var rt client.Object = &reftrainer.ClusterTrainingRuntime{}
	if rtObj["kind"] == reftrainer.TrainingRuntimeKind {
		rt = &reftrainer.TrainingRuntime{}
	}
	if err := convert(rtObj, rt); err != nil {
		return nil, nil, err
	}
	r.client.Client = fake.NewClientBuilder().WithScheme(r.scheme).WithObjects(rt).Build()
	return tj, r.runtimes[refruntime.RuntimeRefToRuntimeRegistryKey(tj.Spec.RuntimeRef)], nil
}

// loadCRDs reads the CRDs of dir alone (its neighbours hold other manifests).
func loadCRDs(dir string) (*crdschema.Schemas, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fsys["crds/"+filepath.Base(f)] = &fstest.MapFile{Data: data}
	}
	return crdschema.Load(fsys)
}

func schemaErrors(ctx context.Context, s *crdschema.Schemas, obj map[string]any) field.ErrorList {
	gvk := gvkOf(obj)
	if _, err := s.Default(gvk, obj); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.Validate(ctx, gvk, obj)
}

// fieldErrors unpacks a webhook's aggregate error into its field errors.
func fieldErrors(err error) field.ErrorList {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	if !errors.As(err, &agg) {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var out field.ErrorList
	for _, e := range agg.Errors() {
		if fe, ok := errors.AsType[*field.Error](e); ok {
			out = append(out, fe)
		} else {
			out = append(out, field.InternalError(nil, e))
		}
	}
	return out
}

func convert(obj any, into any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("panic: %v", p)
	}
}
