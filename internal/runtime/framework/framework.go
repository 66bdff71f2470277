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

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// Entry registers one plugin.
type Entry struct {
	Name string
	New  Factory
}

// Factory creates a plugin.
type Factory func(opts Options) (Plugin, error)

// Options are what plugin factories and the framework may depend on.
type Options struct {
	// StatusServerURL builds the progress URL injected into training pods; empty disables the
	// TrainJobStatus plugin.
	StatusServerURL func(namespace, name string) string
	// Installed reports whether the CRD of a kind is installed; nil means every kind is. A plugin
	// owning a kind that is not installed is left out, and TrainJobs selecting its policy are
	// built without it (reported as a disabled feature).
	Installed func(schema.GroupVersionKind) bool
	// Log receives one line per plugin left out; the zero value discards it.
	Log logr.Logger
}

// Framework holds the plugins of each extension point, in registry order.
type Framework struct {
	plugins      []Plugin
	validators   []CustomValidationPlugin
	watchers     []WatchExtensionPlugin
	owners       []KindOwnerPlugin
	mlPolicies   map[runtime.MLPolicyKind]EnforceMLPolicyPlugin
	podGroups    map[runtime.PodGroupPolicyKind]EnforcePodGroupPolicyPlugin
	podSpecs     []EnforcePodSpecPlugin
	preBuilders  []PreComponentBuilderPlugin
	builders     []ComponentBuilderPlugin
	statusPlugin TrainJobStatusPlugin
	// unavailable are the gang policies whose plugin was left out, with the reason.
	unavailable map[runtime.PodGroupPolicyKind]string
}

// New creates every plugin of entries, in order, and sorts them into extension points. Duplicate
// names, two plugins for one ML or pod group policy kind and two TrainJobStatus plugins are
// errors. A factory returning a nil plugin opts out (e.g. a feature that is off).
func New(entries []Entry, opts Options) (*Framework, error) {
	f := &Framework{
		mlPolicies:  map[runtime.MLPolicyKind]EnforceMLPolicyPlugin{},
		podGroups:   map[runtime.PodGroupPolicyKind]EnforcePodGroupPolicyPlugin{},
		unavailable: map[runtime.PodGroupPolicyKind]string{},
	}
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
		if missing := missingKind(p, opts.Installed); missing != nil {
			opts.Log.Info("CRD not installed; plugin disabled, TrainJobs asking for it run without it",
				"plugin", e.Name, "kind", missing.String())
			if g, ok := p.(EnforcePodGroupPolicyPlugin); ok {
				f.unavailable[g.PodGroupPolicyKind()] = fmt.Sprintf("the %s CRD (%s) is not installed", missing.Kind, missing.GroupVersion())
			}
			continue
		}
		if err := f.add(p); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// missingKind is the first kind p owns whose CRD installed reports missing.
func missingKind(p Plugin, installed func(schema.GroupVersionKind) bool) *schema.GroupVersionKind {
	o, ok := p.(KindOwnerPlugin)
	if !ok || installed == nil {
		return nil
	}
	for _, k := range o.OwnedKinds() {
		if !installed(k.GVK) {
			return &k.GVK
		}
	}
	return nil
}

func (f *Framework) add(p Plugin) error {
	f.plugins = append(f.plugins, p)
	if v, ok := p.(CustomValidationPlugin); ok {
		f.validators = append(f.validators, v)
	}
	if w, ok := p.(WatchExtensionPlugin); ok {
		f.watchers = append(f.watchers, w)
	}
	if o, ok := p.(KindOwnerPlugin); ok {
		f.owners = append(f.owners, o)
	}
	if m, ok := p.(EnforceMLPolicyPlugin); ok {
		if other, dup := f.mlPolicies[m.MLPolicyKind()]; dup {
			return fmt.Errorf("plugins %q and %q both enforce ML policy %s", other.Name(), p.Name(), m.MLPolicyKind())
		}
		f.mlPolicies[m.MLPolicyKind()] = m
	}
	if g, ok := p.(EnforcePodGroupPolicyPlugin); ok {
		if other, dup := f.podGroups[g.PodGroupPolicyKind()]; dup {
			return fmt.Errorf("plugins %q and %q both enforce pod group policy %s", other.Name(), p.Name(), g.PodGroupPolicyKind())
		}
		f.podGroups[g.PodGroupPolicyKind()] = g
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

// selected reports whether p takes part for a runtime with policy: an ML plugin only for its ML
// policy, a gang plugin only for its pod group policy, every other plugin always. This is the one
// place that decides; plugins never check their own policy.
func selected(p Plugin, policy runtime.Policy) bool {
	if m, ok := p.(EnforceMLPolicyPlugin); ok && m.MLPolicyKind() != policy.Kind() {
		return false
	}
	if g, ok := p.(EnforcePodGroupPolicyPlugin); ok {
		kind, err := policy.PodGroupKind()
		return err == nil && g.PodGroupPolicyKind() == kind
	}
	return true
}

// Plugins returns every plugin in registry order.
func (f *Framework) Plugins() []Plugin {
	return f.plugins
}

// WatchExtensionPlugins returns the plugins that add watches, in registry order.
func (f *Framework) WatchExtensionPlugins() []WatchExtensionPlugin {
	return f.watchers
}

// OwnedKinds returns the kinds the plugins build objects of, in registry order, each once.
func (f *Framework) OwnedKinds() []OwnedKind {
	var kinds []OwnedKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, o := range f.owners {
		for _, k := range o.OwnedKinds() {
			if !seen[k.GVK] {
				seen[k.GVK] = true
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

// RunEnforcePipeline runs EnforceMLPolicy, EnforcePodGroupPolicy, EnforcePodSpec and PreBuildSync
// in that order.
func (f *Framework) RunEnforcePipeline(info *runtime.Info, tj *trainer.TrainJob) error {
	steps := []func(*runtime.Info, *trainer.TrainJob) error{
		f.RunEnforceMLPolicyPlugin, f.RunEnforcePodGroupPolicyPlugin, f.RunEnforcePodSpecPlugins, f.RunPreBuildSyncPlugins,
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

// FeatureGangScheduling names gang scheduling among the disabled features of a build.
const FeatureGangScheduling = "GangScheduling"

// RunEnforcePodGroupPolicyPlugin runs the plugin of the pod group policy the runtime selects, if
// any. A policy whose plugin was left out (its CRD is not installed) does not stop the build: the
// pods are scheduled without a gang, and info says so.
func (f *Framework) RunEnforcePodGroupPolicyPlugin(info *runtime.Info, tj *trainer.TrainJob) error {
	kind, err := info.RuntimePolicy.PodGroupKind()
	if err != nil || kind == runtime.NoPodGroup {
		return err
	}
	p, ok := f.podGroups[kind]
	if !ok {
		reason, known := f.unavailable[kind]
		if !known {
			return fmt.Errorf("running EnforcePodGroupPolicy: no plugin handles pod group policy %s", kind)
		}
		info.Disable(FeatureGangScheduling, fmt.Sprintf("the runtime asks for %s gang scheduling, but %s: the pods are scheduled one by one", kind, reason))
		return nil
	}
	if err := p.EnforcePodGroupPolicy(info, tj); err != nil {
		return fmt.Errorf("running EnforcePodGroupPolicy plugin %q: %w", p.Name(), err)
	}
	return nil
}

// RunEnforcePodSpecPlugins runs every EnforcePodSpec plugin.
func (f *Framework) RunEnforcePodSpecPlugins(info *runtime.Info, tj *trainer.TrainJob) error {
	for _, p := range f.podSpecs {
		if !selected(p, info.RuntimePolicy) {
			continue
		}
		if err := p.EnforcePodSpec(info, tj); err != nil {
			return fmt.Errorf("running EnforcePodSpec plugin %q: %w", p.Name(), err)
		}
	}
	return nil
}

// RunPreBuildSyncPlugins runs every PreBuildSync plugin; it must follow the Enforce points.
func (f *Framework) RunPreBuildSyncPlugins(info *runtime.Info, tj *trainer.TrainJob) error {
	for _, p := range f.preBuilders {
		if !selected(p, info.RuntimePolicy) {
			continue
		}
		if err := p.PreBuildSync(info, tj); err != nil {
			return fmt.Errorf("running PreBuildSync plugin %q: %w", p.Name(), err)
		}
	}
	return nil
}

// RunComponentBuilderPlugins collects the objects of every builder, in registry order. It must
// follow RunEnforcePipeline.
func (f *Framework) RunComponentBuilderPlugins(ctx context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	var objs []apply.Desired
	for _, p := range f.builders {
		if !selected(p, info.RuntimePolicy) {
			continue
		}
		o, err := p.Build(ctx, info, tj)
		if err != nil {
			return nil, fmt.Errorf("running Build plugin %q: %w", p.Name(), err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// RunCustomValidationPlugins runs every validator the runtime selects and joins their warnings
// and errors.
func (f *Framework) RunCustomValidationPlugins(info *runtime.Info, old, new *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	var warnings admission.Warnings
	var errs field.ErrorList
	for _, p := range f.validators {
		if !selected(p, info.RuntimePolicy) {
			continue
		}
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
