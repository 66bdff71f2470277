package plugins

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/coscheduling"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/volcano"
)

// NewRuntime returns a core.Runtime over the built-in plugins.
func NewRuntime(opts framework.Options) (*core.Runtime, error) {
	return NewRuntimeOf(Builtin(), opts)
}

// NewRuntimeOf returns a core.Runtime over the given plugins.
func NewRuntimeOf(entries []framework.Entry, opts framework.Options) (*core.Runtime, error) {
	fwk, err := framework.New(entries, opts)
	if err != nil {
		return nil, err
	}
	return core.New(fwk)
}

// RequiredKinds names, per plugin, the kind whose CRD the plugin creates objects of. A plugin
// whose CRD is not installed cannot work and is left out by WithInstalledCRDs.
var RequiredKinds = map[string]schema.GroupVersionKind{
	coscheduling.Name: schedulerpluginsv1alpha1.SchemeGroupVersion.WithKind("PodGroup"),
	volcano.Name:      volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup"),
}

// WithInstalledCRDs drops the entries whose required CRD installed reports missing, calling
// skipped for each.
func WithInstalledCRDs(entries []framework.Entry, installed func(schema.GroupVersionKind) bool, skipped func(name string, gvk schema.GroupVersionKind)) []framework.Entry {
	out := make([]framework.Entry, 0, len(entries))
	for _, e := range entries {
		if gvk, ok := RequiredKinds[e.Name]; ok && !installed(gvk) {
			skipped(e.Name, gvk)
			continue
		}
		out = append(out, e)
	}
	return out
}
