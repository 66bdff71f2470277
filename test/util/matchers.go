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

package util

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// BeInvalidError matches a 422 Invalid error from the apiserver (a schema or CEL rejection) with
// a cause at field whose message contains message. An empty field stands for the object root,
// which the apiserver reports as "<nil>" (rules on the whole object, such as the name format).
func BeInvalidError(field, message string) types.GomegaMatcher {
	return gcustom.MakeMatcher(func(err error) (bool, error) {
		if err == nil || !apierrors.IsInvalid(err) {
			return false, nil
		}
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Details == nil {
			return false, nil
		}
		for _, c := range status.Status().Details.Causes {
			if c.Field == "<nil>" {
				c.Field = ""
			}
			if c.Field == field && strings.Contains(c.Message, message) {
				return true, nil
			}
		}
		return false, nil
	}).WithTemplate(fmt.Sprintf("Expected\n{{.FormattedActual}}\nto be an Invalid error with a cause at %q containing %q", field, message))
}
