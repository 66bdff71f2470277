package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// fake implements every extension point and records each call in a shared log.
type fake struct {
	name string
	kind runtime.MLPolicyKind
	log  *[]string
	fail bool
}

func (f *fake) Name() string                       { return f.name }
func (f *fake) MLPolicyKind() runtime.MLPolicyKind { return f.kind }

func (f *fake) record(point string) error {
	*f.log = append(*f.log, point+":"+f.name)
	if f.fail {
		return errors.New("boom")
	}
	return nil
}

func (f *fake) EnforceMLPolicy(*runtime.Info, *trainer.TrainJob) error { return f.record("ml") }
func (f *fake) EnforcePodGroupPolicy(*runtime.Info, *trainer.TrainJob) error {
	return f.record("podgroup")
}
func (f *fake) EnforcePodSpec(*runtime.Info, *trainer.TrainJob) error { return f.record("podspec") }
func (f *fake) PreBuildSync(*runtime.Info, *trainer.TrainJob) error   { return f.record("prebuild") }
func (f *fake) Build(context.Context, *runtime.Info, *trainer.TrainJob) ([]runtime.Object, error) {
	return nil, f.record("build")
}

func (f *fake) Validate(*runtime.Info, *trainer.TrainJob, *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	_ = f.record("validate")
	return admission.Warnings{"w-" + f.name}, field.ErrorList{field.Invalid(field.NewPath(f.name), 1, "bad")}
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

func TestNew(t *testing.T) {
	var log []string
	cases := map[string]struct {
		entries []Entry
		wantErr string
	}{
		"distinct plugins": {
			entries: []Entry{entry(&fake{name: "a", kind: runtime.Torch, log: &log}), entry(&minimal{name: "b", kind: runtime.MPI, log: &log})},
		},
		"duplicate name": {
			entries: []Entry{entry(&minimal{name: "a", kind: runtime.Torch, log: &log}), entry(&minimal{name: "a", kind: runtime.MPI, log: &log})},
			wantErr: `plugin "a" is registered twice`,
		},
		"two plugins for one ML policy": {
			entries: []Entry{entry(&minimal{name: "a", kind: runtime.Torch, log: &log}), entry(&minimal{name: "b", kind: runtime.Torch, log: &log})},
			wantErr: `plugins "a" and "b" both enforce ML policy Torch`,
		},
		"two status plugins": {
			entries: []Entry{
				entry(&statusFake{fake{name: "a", kind: runtime.Torch, log: &log}}),
				entry(&statusFake{fake{name: "b", kind: runtime.MPI, log: &log}}),
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

func TestRunEnforcePipelineOrder(t *testing.T) {
	var log []string
	fwk, err := New([]Entry{
		entry(&fake{name: "first", kind: runtime.Torch, log: &log}),
		entry(&fake{name: "second", kind: runtime.MPI, log: &log}),
		entry(&fake{name: "third", kind: runtime.PlainML, log: &log}),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := &runtime.Info{RuntimePolicy: runtime.Policy{MLPolicy: &trainer.MLPolicy{
		MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{}},
	}}}
	if err := fwk.RunEnforcePipeline(info, &trainer.TrainJob{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fwk.RunComponentBuilderPlugins(context.Background(), info, &trainer.TrainJob{}); err != nil {
		t.Fatal(err)
	}
	// Only the MPI plugin enforces its ML policy; every other point runs all plugins in
	// registry order, and the points run in their documented order.
	want := []string{
		"ml:second",
		"podgroup:first", "podgroup:second", "podgroup:third",
		"podspec:first", "podspec:second", "podspec:third",
		"prebuild:first", "prebuild:second", "prebuild:third",
		"build:first", "build:second", "build:third",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("call order (-want,+got):\n%s", diff)
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
	fwk, err := New([]Entry{entry(&fake{name: "flaky", kind: runtime.PlainML, log: &log, fail: true})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := &runtime.Info{}
	tj := &trainer.TrainJob{}
	_, buildErr := fwk.RunComponentBuilderPlugins(context.Background(), info, tj)
	got := []string{
		fmt.Sprint(fwk.RunEnforceMLPolicyPlugin(info, tj)),
		fmt.Sprint(fwk.RunEnforcePodGroupPolicyPlugins(info, tj)),
		fmt.Sprint(fwk.RunEnforcePodSpecPlugins(info, tj)),
		fmt.Sprint(fwk.RunPreBuildSyncPlugins(info, tj)),
		fmt.Sprint(buildErr),
	}
	want := []string{
		`running EnforceMLPolicy plugin "flaky": boom`,
		`running EnforcePodGroupPolicy plugin "flaky": boom`,
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
		entry(&fake{name: "a", kind: runtime.Torch, log: &log}),
		entry(&minimal{name: "b", kind: runtime.MPI, log: &log}),
		entry(&fake{name: "c", kind: runtime.JAX, log: &log}),
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
	one, err := New([]Entry{entry(&statusFake{fake{name: "s", kind: runtime.Torch, log: &log}})}, Options{})
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
