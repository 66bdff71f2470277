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
