// Package plainml handles runtimes without an ML framework: the TrainJob's numNodes sets the
// trainer's pod count, and nothing else is injected.
package plainml

import (
	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "PlainML"

// PlainML is the ML policy of runtimes without a framework.
type PlainML struct{}

var _ framework.EnforceMLPolicyPlugin = (*PlainML)(nil)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &PlainML{}, nil
}

// Name returns the plugin name.
func (*PlainML) Name() string { return Name }

// MLPolicyKind is PlainML.
func (*PlainML) MLPolicyKind() runtime.MLPolicyKind { return runtime.PlainML }

// EnforceMLPolicy sets the trainer's pod count from trainer.numNodes.
func (*PlainML) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	if tj.Spec.Trainer != nil {
		info.SetTrainerCount(tj.Spec.Trainer.NumNodes)
	}
	return nil
}
