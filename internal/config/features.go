package config

import (
	"fmt"

	"github.com/gantry-ml/gantry/internal/features"
)

// ApplyFeatureGates sets the gates from the file, then from the --feature-gates flag, which wins.
func ApplyFeatureGates(fromFile map[string]bool, flag string) error {
	if err := features.Gates().SetFromMap(fromFile); err != nil {
		return fmt.Errorf("invalid configuration: featureGates: %w", err)
	}
	if flag == "" {
		return nil
	}
	if err := features.Gates().Set(flag); err != nil {
		return fmt.Errorf("invalid --feature-gates: %w", err)
	}
	return nil
}
