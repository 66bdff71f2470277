package plugins

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// TestBuiltinOrder pins the registry order: it is the execution order inside every extension
// point, so changing it changes what the controller builds.
func TestBuiltinOrder(t *testing.T) {
	var got []string
	for _, e := range Builtin() {
		got = append(got, e.Name)
	}
	want := []string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "Volcano", "TrainJobStatus", "JobSet"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Builtin() order (-want,+got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		opts framework.Options
		want []string
	}{
		"status server on":  {opts: framework.Options{StatusServerURL: func(_, _ string) string { return "https://x" }}, want: want},
		"status server off": {want: []string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "Volcano", "JobSet"}},
	} {
		fwk, err := framework.New(Builtin(), tc.opts)
		if err != nil {
			t.Fatalf("%s: framework.New(Builtin()) error: %v", name, err)
		}
		got = nil
		for _, p := range fwk.Plugins() {
			got = append(got, p.Name())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: framework plugin order (-want,+got):\n%s", name, diff)
		}
	}
}

func TestWithInstalledCRDs(t *testing.T) {
	var skipped []string
	entries := WithInstalledCRDs(Builtin(),
		func(gvk schema.GroupVersionKind) bool { return gvk.Group == "scheduling.x-k8s.io" },
		func(name string, _ schema.GroupVersionKind) { skipped = append(skipped, name) })
	var got []string
	for _, e := range entries {
		got = append(got, e.Name)
	}
	if diff := cmp.Diff([]string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "TrainJobStatus", "JobSet"}, got); diff != "" {
		t.Errorf("entries (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Volcano"}, skipped); diff != "" {
		t.Errorf("skipped (-want,+got):\n%s", diff)
	}
}
