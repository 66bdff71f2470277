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
