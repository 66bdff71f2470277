package framework

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// Entry registers one plugin.
type Entry struct {
	Name string
	New  Factory
}

// Factory creates a plugin.
type Factory func(opts Options) (Plugin, error)

// Options are what plugin factories may depend on.
type Options struct {
	// StatusServerURL builds the progress URL injected into training pods; empty disables the
	// TrainJobStatus plugin.
	StatusServerURL func(namespace, name string) string
}

// Framework holds the plugins of each extension point, in registry order.
type Framework struct {
	plugins      []Plugin
	validators   []CustomValidationPlugin
	watchers     []WatchExtensionPlugin
	mlPolicies   map[runtime.MLPolicyKind]EnforceMLPolicyPlugin
	podGroups    []EnforcePodGroupPolicyPlugin
	podSpecs     []EnforcePodSpecPlugin
	preBuilders  []PreComponentBuilderPlugin
	builders     []ComponentBuilderPlugin
	statusPlugin TrainJobStatusPlugin
}

// New creates every plugin of entries, in order, and sorts them into extension points. Duplicate
// names, two plugins for one ML policy kind and two TrainJobStatus plugins are errors. A factory
// returning a nil plugin opts out (e.g. a feature that is off).
func New(entries []Entry, opts Options) (*Framework, error) {
	f := &Framework{mlPolicies: map[runtime.MLPolicyKind]EnforceMLPolicyPlugin{}}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			return nil, fmt.Errorf("plugin %q is registered twice", e.Name)
		}
		seen[e.Name] = true
		p, err := e.New(opts)
		if err != nil {
			return nil, fmt.Errorf("creating plugin %q: %w", e.Name, err)
		}
		if p == nil {
			continue
		}
		if p.Name() != e.Name {
			return nil, fmt.Errorf("plugin registered as %q calls itself %q", e.Name, p.Name())
		}
		if err := f.add(p); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *Framework) add(p Plugin) error {
	f.plugins = append(f.plugins, p)
	if v, ok := p.(CustomValidationPlugin); ok {
		f.validators = append(f.validators, v)
	}
	if w, ok := p.(WatchExtensionPlugin); ok {
		f.watchers = append(f.watchers, w)
	}
	if m, ok := p.(EnforceMLPolicyPlugin); ok {
		if other, dup := f.mlPolicies[m.MLPolicyKind()]; dup {
			return fmt.Errorf("plugins %q and %q both enforce ML policy %s", other.Name(), p.Name(), m.MLPolicyKind())
		}
		f.mlPolicies[m.MLPolicyKind()] = m
	}
	if g, ok := p.(EnforcePodGroupPolicyPlugin); ok {
		f.podGroups = append(f.podGroups, g)
	}
	if s, ok := p.(EnforcePodSpecPlugin); ok {
		f.podSpecs = append(f.podSpecs, s)
	}
	if b, ok := p.(PreComponentBuilderPlugin); ok {
		f.preBuilders = append(f.preBuilders, b)
	}
	if b, ok := p.(ComponentBuilderPlugin); ok {
		f.builders = append(f.builders, b)
	}
	if s, ok := p.(TrainJobStatusPlugin); ok {
		if f.statusPlugin != nil {
			return fmt.Errorf("too many TrainJobStatus plugins are registered: %q and %q", f.statusPlugin.Name(), p.Name())
		}
		f.statusPlugin = s
	}
	return nil
}

// Plugins returns every plugin in registry order.
func (f *Framework) Plugins() []Plugin {
	return f.plugins
}

// WatchExtensionPlugins returns the plugins that add watches, in registry order.
func (f *Framework) WatchExtensionPlugins() []WatchExtensionPlugin {
	return f.watchers
}

// RunEnforcePipeline runs EnforceMLPolicy, EnforcePodGroupPolicy, EnforcePodSpec and PreBuildSync
// in that order.
func (f *Framework) RunEnforcePipeline(info *runtime.Info, tj *trainer.TrainJob) error {
	steps := []func(*runtime.Info, *trainer.TrainJob) error{
		f.RunEnforceMLPolicyPlugin, f.RunEnforcePodGroupPolicyPlugins, f.RunEnforcePodSpecPlugins, f.RunPreBuildSyncPlugins,
	}
	for _, step := range steps {
		if err := step(info, tj); err != nil {
			return err
		}
	}
	return nil
}

// RunEnforceMLPolicyPlugin runs the plugin of the ML policy the runtime selects.
func (f *Framework) RunEnforceMLPolicyPlugin(info *runtime.Info, tj *trainer.TrainJob) error {
	kind := info.RuntimePolicy.Kind()
	p, ok := f.mlPolicies[kind]
	if !ok {
		return fmt.Errorf("running EnforceMLPolicy: no plugin handles ML policy %s", kind)
	}
	if err := p.EnforceMLPolicy(info, tj); err != nil {
		return fmt.Errorf("running EnforceMLPolicy plugin %q: %w", p.Name(), err)
	}
	return nil
}

// RunEnforcePodGroupPolicyPlugins runs every EnforcePodGroupPolicy plugin.
func (f *Framework) RunEnforcePodGroupPolicyPlugins(info *runtime.Info, tj *trainer.TrainJob) error {
	for _, p := range f.podGroups {
		if err := p.EnforcePodGroupPolicy(info, tj); err != nil {
			return fmt.Errorf("running EnforcePodGroupPolicy plugin %q: %w", p.Name(), err)
		}
	}
	return nil
}

// RunEnforcePodSpecPlugins runs every EnforcePodSpec plugin.
func (f *Framework) RunEnforcePodSpecPlugins(info *runtime.Info, tj *trainer.TrainJob) error {
	for _, p := range f.podSpecs {
		if err := p.EnforcePodSpec(info, tj); err != nil {
			return fmt.Errorf("running EnforcePodSpec plugin %q: %w", p.Name(), err)
		}
	}
	return nil
}

// RunPreBuildSyncPlugins runs every PreBuildSync plugin; it must follow the Enforce points.
func (f *Framework) RunPreBuildSyncPlugins(info *runtime.Info, tj *trainer.TrainJob) error {
	for _, p := range f.preBuilders {
		if err := p.PreBuildSync(info, tj); err != nil {
			return fmt.Errorf("running PreBuildSync plugin %q: %w", p.Name(), err)
		}
	}
	return nil
}

// RunComponentBuilderPlugins collects the objects of every builder, in registry order. It must
// follow RunEnforcePipeline.
func (f *Framework) RunComponentBuilderPlugins(ctx context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]runtime.Object, error) {
	var objs []runtime.Object
	for _, p := range f.builders {
		o, err := p.Build(ctx, info, tj)
		if err != nil {
			return nil, fmt.Errorf("running Build plugin %q: %w", p.Name(), err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// RunCustomValidationPlugins runs every validator and joins their warnings and errors.
func (f *Framework) RunCustomValidationPlugins(info *runtime.Info, old, new *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	var warnings admission.Warnings
	var errs field.ErrorList
	for _, p := range f.validators {
		w, e := p.Validate(info, old, new)
		warnings = append(warnings, w...)
		errs = append(errs, e...)
	}
	return warnings, errs
}

// ErrNoStatusPlugin is returned by RunTrainJobStatusPlugin when no plugin computes status.
var ErrNoStatusPlugin = errors.New("no TrainJobStatus plugin is registered")

// RunTrainJobStatusPlugin computes the TrainJob status.
func (f *Framework) RunTrainJobStatusPlugin(tj *trainer.TrainJob, jobSet *jobsetv1alpha2.JobSet) (*trainer.TrainJobStatus, error) {
	if f.statusPlugin == nil {
		return nil, ErrNoStatusPlugin
	}
	status, err := f.statusPlugin.Status(tj, jobSet)
	if err != nil {
		return nil, fmt.Errorf("running TrainJobStatus plugin %q: %w", f.statusPlugin.Name(), err)
	}
	return status, nil
}
