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

package schema

import (
	"fmt"

	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"

	"github.com/gantry-ml/gantry/internal/apply"
)

// containSubset matches a decoded JSON value that holds every field of want with the same value;
// lists must match element by element. The apiserver may add defaults, never drop or change.
func containSubset(want any) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(got any) (bool, error) {
		return apply.Subset(want, got), nil
	}).WithTemplate(fmt.Sprintf("Expected\n{{.FormattedActual}}\nto contain every field of\n%v", want))
}
