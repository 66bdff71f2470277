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

package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// fake implements every extension point a policy-independent plugin can, and records each call
// in a shared log.
type fake struct {
	name string
	log  *[]string
	fail bool
}

func (f *fake) Name() string { return f.name }

func (f *fake) record(point string) error {
	*f.log = append(*f.log, point+":"+f.name)
	if f.fail {
		return errors.New("boom")
	}
	return nil
}

func (f *fake) EnforcePodSpec(*runtime.Info, *trainer.TrainJob) error { return f.record("podspec") }
func (f *fake) PreBuildSync(*runtime.Info, *trainer.TrainJob) error   { return f.record("prebuild") }
func (f *fake) Build(context.Context, *runtime.Info, *trainer.TrainJob) ([]apply.Desired, error) {
	return nil, f.record("build")
}

func (f *fake) Validate(*runtime.Info, *trainer.TrainJob, *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	_ = f.record("validate")
	return admission.Warnings{"w-" + f.name}, field.ErrorList{field.Invalid(field.NewPath(f.name), 1, "bad")}
}

// mlFake is an ML policy plugin with every other extension point too.
type mlFake struct {
	fake
	kind runtime.MLPolicyKind
}

func (f *mlFake) MLPolicyKind() runtime.MLPolicyKind                     { return f.kind }
func (f *mlFake) EnforceMLPolicy(*runtime.Info, *trainer.TrainJob) error { return f.record("ml") }

// gangFake is a gang plugin with every other extension point too, owning one kind.
type gangFake struct {
	fake
	kind runtime.PodGroupPolicyKind
	gvk  schema.GroupVersionKind
}

func (f *gangFake) PodGroupPolicyKind() runtime.PodGroupPolicyKind { return f.kind }
func (f *gangFake) EnforcePodGroupPolicy(*runtime.Info, *trainer.TrainJob) error {
	return f.record("podgroup")
}
func (f *gangFake) OwnedKinds() []OwnedKind {
	return []OwnedKind{{GVK: f.gvk, New: func() client.Object { return nil }}}
}

// statusFake adds the TrainJobStatus extension point.
type statusFake struct{ fake }

func (f *statusFake) Status(*trainer.TrainJob, *jobsetv1alpha2.JobSet) (*trainer.TrainJobStatus, error) {
	return &trainer.TrainJobStatus{}, f.record("status")
}

// minimal implements only Plugin and one ML policy.
type minimal struct {
	name string
	kind runtime.MLPolicyKind
	log  *[]string
}

func (m *minimal) Name() string                       { return m.name }
func (m *minimal) MLPolicyKind() runtime.MLPolicyKind { return m.kind }
func (m *minimal) EnforceMLPolicy(*runtime.Info, *trainer.TrainJob) error {
	*m.log = append(*m.log, "ml:"+m.name)
	return nil
}

func entry(p Plugin) Entry {
	return Entry{Name: p.Name(), New: func(Options) (Plugin, error) { return p, nil }}
}

func ml(name string, kind runtime.MLPolicyKind, log *[]string) *mlFake {
	return &mlFake{fake: fake{name: name, log: log}, kind: kind}
}

func gang(name string, kind runtime.PodGroupPolicyKind, log *[]string) *gangFake {
	return &gangFake{fake: fake{name: name, log: log}, kind: kind, gvk: schema.GroupVersionKind{Group: name + ".example", Version: "v1", Kind: "PodGroup"}}
}

func TestNew(t *testing.T) {
	var log []string
	cases := map[string]struct {
		entries []Entry
		wantErr string
	}{
		"distinct plugins": {
			entries: []Entry{entry(ml("a", runtime.Torch, &log)), entry(&minimal{name: "b", kind: runtime.MPI, log: &log})},
		},
		"duplicate name": {
			entries: []Entry{entry(&minimal{name: "a", kind: runtime.Torch, log: &log}), entry(&minimal{name: "a", kind: runtime.MPI, log: &log})},
			wantErr: `plugin "a" is registered twice`,
		},
		"two plugins for one ML policy": {
			entries: []Entry{entry(&minimal{name: "a", kind: runtime.Torch, log: &log}), entry(&minimal{name: "b", kind: runtime.Torch, log: &log})},
			wantErr: `plugins "a" and "b" both enforce ML policy Torch`,
		},
		"two plugins for one pod group policy": {
			entries: []Entry{entry(gang("a", runtime.Volcano, &log)), entry(gang("b", runtime.Volcano, &log))},
			wantErr: `plugins "a" and "b" both enforce pod group policy Volcano`,
		},
		"two status plugins": {
			entries: []Entry{
				entry(&statusFake{fake{name: "a", log: &log}}),
				entry(&statusFake{fake{name: "b", log: &log}}),
			},
			wantErr: `too many TrainJobStatus plugins are registered: "a" and "b"`,
		},
		"a factory error names the plugin": {
			entries: []Entry{{Name: "broken", New: func(Options) (Plugin, error) { return nil, errors.New("no config") }}},
			wantErr: `creating plugin "broken": no config`,
		},
		"a registered name that differs from the plugin's": {
			entries: []Entry{{Name: "alias", New: func(Options) (Plugin, error) { return &minimal{name: "real", log: &log}, nil }}},
			wantErr: `plugin registered as "alias" calls itself "real"`,
		},
		"a nil plugin opts out": {
			entries: []Entry{{Name: "off", New: func(Options) (Plugin, error) { return nil, nil }}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.entries, Options{})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("New() error (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestOnlySelectedPoliciesRun pins that the framework alone decides which plugins run: ML and
// gang plugins take part in every point they implement only for the runtime that selects them,
// the others always, each point in registry order and the points in their documented order.
func TestOnlySelectedPoliciesRun(t *testing.T) {
	var log []string
	fwk, err := New([]Entry{
		entry(ml("torch", runtime.Torch, &log)),
		entry(ml("mpi", runtime.MPI, &log)),
		entry(gang("cosched", runtime.Coscheduling, &log)),
		entry(gang("volcano", runtime.Volcano, &log)),
		entry(&fake{name: "common", log: &log}),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := &runtime.Info{RuntimePolicy: runtime.Policy{
		MLPolicy:       &trainer.MLPolicy{MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{}}},
		PodGroupPolicy: &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Volcano: &trainer.VolcanoPodGroupPolicySource{}}},
	}}
	tj := &trainer.TrainJob{}
	if err := fwk.RunEnforcePipeline(info, tj); err != nil {
		t.Fatal(err)
	}
	if _, err := fwk.RunComponentBuilderPlugins(context.Background(), info, tj); err != nil {
		t.Fatal(err)
	}
	fwk.RunCustomValidationPlugins(info, nil, tj)
	want := []string{
		"ml:mpi",
		"podgroup:volcano",
		"podspec:mpi", "podspec:volcano", "podspec:common",
		"prebuild:mpi", "prebuild:volcano", "prebuild:common",
		"build:mpi", "build:volcano", "build:common",
		"validate:mpi", "validate:volcano", "validate:common",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("calls (-want,+got):\n%s", diff)
	}
}

func TestPodGroupPolicyDispatch(t *testing.T) {
	both := &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
		Coscheduling: &trainer.CoschedulingPodGroupPolicySource{}, Volcano: &trainer.VolcanoPodGroupPolicySource{}}}
	volcano := &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Volcano: &trainer.VolcanoPodGroupPolicySource{}}}
	cases := map[string]struct {
		policy       *trainer.PodGroupPolicy
		installed    bool
		want         []string
		wantErr      string
		wantDisabled []runtime.DisabledFeature
	}{
		"no policy": {installed: true},
		"selected":  {policy: volcano, installed: true, want: []string{"podgroup:volcano"}},
		"both, from a runtime admitted without validation": {policy: both, installed: true,
			wantErr: "the runtime's podGroupPolicy sets both coscheduling and volcano; only one gang scheduler can be used"},
		"its CRD is not installed: built without the gang, and said so": {policy: volcano,
			wantDisabled: []runtime.DisabledFeature{{Name: FeatureGangScheduling,
				Message: "the runtime asks for Volcano gang scheduling, but the PodGroup CRD (volcano.example/v1) is not installed: the pods are scheduled one by one"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var log []string
			fwk, err := New([]Entry{entry(gang("volcano", runtime.Volcano, &log))},
				Options{Installed: func(schema.GroupVersionKind) bool { return tc.installed }})
			if err != nil {
				t.Fatal(err)
			}
			info := &runtime.Info{RuntimePolicy: runtime.Policy{PodGroupPolicy: tc.policy}}
			gotErr := ""
			if err := fwk.RunEnforcePodGroupPolicyPlugin(info, &trainer.TrainJob{}); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, log); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDisabled, info.Disabled); diff != "" {
				t.Errorf("disabled features (-want,+got):\n%s", diff)
			}
			wantKinds := 1
			if !tc.installed {
				wantKinds = 0
			}
			if got := len(fwk.OwnedKinds()); got != wantKinds {
				t.Errorf("OwnedKinds() has %d kinds, want %d", got, wantKinds)
			}
		})
	}
}

func TestRunEnforceMLPolicyDispatch(t *testing.T) {
	source := func(s trainer.MLPolicySource) *trainer.MLPolicy { return &trainer.MLPolicy{MLPolicySource: s} }
	cases := map[string]struct {
		policy  *trainer.MLPolicy
		want    []string
		wantErr string
	}{
		"no policy is plain ML": {want: []string{"ml:plain"}},
		"numNodes only is plain ML": {
			policy: &trainer.MLPolicy{},
			want:   []string{"ml:plain"},
		},
		"torch":   {policy: source(trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}), want: []string{"ml:torch"}},
		"jax":     {policy: source(trainer.MLPolicySource{JAX: &trainer.JAXMLPolicySource{}}), want: []string{"ml:jax"}},
		"xgboost": {policy: source(trainer.MLPolicySource{XGBoost: &trainer.XGBoostMLPolicySource{}}), wantErr: "running EnforceMLPolicy: no plugin handles ML policy XGBoost"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var log []string
			fwk, err := New([]Entry{
				entry(&minimal{name: "plain", kind: runtime.PlainML, log: &log}),
				entry(&minimal{name: "torch", kind: runtime.Torch, log: &log}),
				entry(&minimal{name: "jax", kind: runtime.JAX, log: &log}),
			}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = fwk.RunEnforceMLPolicyPlugin(&runtime.Info{RuntimePolicy: runtime.Policy{MLPolicy: tc.policy}}, &trainer.TrainJob{})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, log); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestErrorsNameExtensionPointAndPlugin(t *testing.T) {
	var log []string
	flaky := func(name string) fake { return fake{name: name, log: &log, fail: true} }
	fwk, err := New([]Entry{
		entry(&mlFake{fake: flaky("flaky"), kind: runtime.PlainML}),
		entry(&gangFake{fake: flaky("gang"), kind: runtime.Coscheduling}),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := &runtime.Info{RuntimePolicy: runtime.Policy{PodGroupPolicy: &trainer.PodGroupPolicy{
		PodGroupPolicySource: trainer.PodGroupPolicySource{Coscheduling: &trainer.CoschedulingPodGroupPolicySource{}}}}}
	tj := &trainer.TrainJob{}
	_, buildErr := fwk.RunComponentBuilderPlugins(context.Background(), info, tj)
	got := []string{
		fmt.Sprint(fwk.RunEnforceMLPolicyPlugin(info, tj)),
		fmt.Sprint(fwk.RunEnforcePodGroupPolicyPlugin(info, tj)),
		fmt.Sprint(fwk.RunEnforcePodSpecPlugins(info, tj)),
		fmt.Sprint(fwk.RunPreBuildSyncPlugins(info, tj)),
		fmt.Sprint(buildErr),
	}
	want := []string{
		`running EnforceMLPolicy plugin "flaky": boom`,
		`running EnforcePodGroupPolicy plugin "gang": boom`,
		`running EnforcePodSpec plugin "flaky": boom`,
		`running PreBuildSync plugin "flaky": boom`,
		`running Build plugin "flaky": boom`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want,+got):\n%s", diff)
	}
	if err := fwk.RunEnforcePipeline(info, tj); err == nil || err.Error() != want[0] {
		t.Errorf("RunEnforcePipeline() = %v, want the first point's error %q", err, want[0])
	}
}

func TestRunCustomValidationPlugins(t *testing.T) {
	var log []string
	fwk, err := New([]Entry{
		entry(ml("a", runtime.PlainML, &log)),
		entry(&minimal{name: "b", kind: runtime.MPI, log: &log}),
		entry(&fake{name: "c", log: &log}),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	warnings, errs := fwk.RunCustomValidationPlugins(&runtime.Info{}, nil, &trainer.TrainJob{})
	if diff := cmp.Diff(admission.Warnings{"w-a", "w-c"}, warnings); diff != "" {
		t.Errorf("warnings (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("[a: Invalid value: 1: bad, c: Invalid value: 1: bad]", errs.ToAggregate().Error()); diff != "" {
		t.Errorf("errors (-want,+got):\n%s", diff)
	}
}

func TestRunTrainJobStatusPlugin(t *testing.T) {
	var log []string
	none, err := New([]Entry{entry(&minimal{name: "a", kind: runtime.Torch, log: &log})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.RunTrainJobStatusPlugin(&trainer.TrainJob{}, nil); !errors.Is(err, ErrNoStatusPlugin) {
		t.Errorf("RunTrainJobStatusPlugin() without a plugin = %v, want ErrNoStatusPlugin", err)
	}
	one, err := New([]Entry{entry(&statusFake{fake{name: "s", log: &log}})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.RunTrainJobStatusPlugin(&trainer.TrainJob{}, nil); err != nil {
		t.Errorf("RunTrainJobStatusPlugin() = %v", err)
	}
	if diff := cmp.Diff([]string{"status:s"}, log); diff != "" {
		t.Errorf("calls (-want,+got):\n%s", diff)
	}
}
