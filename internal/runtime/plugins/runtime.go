package plugins

import (
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
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
