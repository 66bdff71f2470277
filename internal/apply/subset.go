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

package apply

import "k8s.io/apimachinery/pkg/api/equality"

// Subset reports whether got, a decoded JSON value, holds every field of want with the same
// value; lists must match element by element, and numbers compare by value whether decoded as
// int64 or float64. It tells whether an object in the cluster already carries what Gantry would
// write (the apiserver and other controllers may have added more, never less).
func Subset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !Subset(v, g[k]) {
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
			if !Subset(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		if wn, ok := number(want); ok {
			gn, ok := number(got)
			return ok && wn == gn
		}
		return equality.Semantic.DeepEqual(want, got)
	}
}

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
