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
