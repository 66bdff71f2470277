// Package features holds Gantry's feature gates.
package features

import (
	"k8s.io/component-base/featuregate"
)

// TrainJobStatus lets training code report progress into TrainJob.status.trainerStatus through
// the status server (KEP-2779).
//
// owner: gantry maintainers; stage: alpha.
const TrainJobStatus featuregate.Feature = "TrainJobStatus"

var gates = featuregate.NewFeatureGate()

func init() {
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		TrainJobStatus: {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		panic(err)
	}
}

// Gates is the process-wide mutable gate set, set once at start-up.
func Gates() featuregate.MutableFeatureGate {
	return gates
}

// Enabled reports whether a feature is on.
func Enabled(f featuregate.Feature) bool {
	return gates.Enabled(f)
}
