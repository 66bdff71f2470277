package schema

import (
	"fmt"
	"reflect"

	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"
)

// containSubset matches a decoded JSON value that holds every field of want with the same value;
// lists must match element by element. The apiserver may add defaults, never drop or change.
func containSubset(want any) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(got any) (bool, error) {
		return isSubset(want, got), nil
	}).WithTemplate(fmt.Sprintf("Expected\n{{.FormattedActual}}\nto contain every field of\n%v", want))
}

func isSubset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !isSubset(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !isSubset(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		if wn, ok := number(want); ok {
			gn, ok := number(got)
			return ok && wn == gn
		}
		return reflect.DeepEqual(want, got)
	}
}

// number reads a decoded JSON number: YAML decoding yields float64, the client int64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	default:
		return 0, false
	}
}
