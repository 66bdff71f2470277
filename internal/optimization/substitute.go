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

package optimization

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// placeholder is "${trialParameters.<name>}", the convention Katib's trial templates use. The
// name runs to the first "}"; there is no escape, as no trainer command needs the literal text.
var placeholder = regexp.MustCompile(`\$\{trialParameters\.([^}]*)\}`)

// Reference is one placeholder in a trial template.
type Reference struct {
	// Path is the string holding it, e.g. spec.trainJobTemplate.spec.trainer.command[1].
	Path *field.Path
	// Name is the parameter it names.
	Name string
}

// References lists every placeholder of a template spec, in field order: the trainer's
// command, args and env values, the only strings substituted.
func References(spec *trainer.TrainJobSpec, specPath *field.Path) []Reference {
	var out []Reference
	for _, s := range substituted(spec, specPath) {
		for _, m := range placeholder.FindAllStringSubmatch(*s.value, -1) {
			out = append(out, Reference{Path: s.path, Name: m[1]})
		}
	}
	return out
}

// Substitute returns a copy of the template spec with every placeholder replaced by the value
// of the parameter it names, in spec.trainer.command, spec.trainer.args and
// spec.trainer.env[].value; other fields are copied unchanged. A name without a value is an
// error (the webhook refuses such templates).
func Substitute(spec *trainer.TrainJobSpec, values []trainer.ParameterAssignment) (*trainer.TrainJobSpec, error) {
	byName := make(map[string]string, len(values))
	for _, v := range values {
		byName[v.Name] = v.Value
	}
	out := spec.DeepCopy()
	var unknown []string
	for _, s := range substituted(out, field.NewPath("spec")) {
		*s.value = placeholder.ReplaceAllStringFunc(*s.value, func(m string) string {
			name := placeholder.FindStringSubmatch(m)[1]
			v, ok := byName[name]
			if !ok {
				unknown = append(unknown, fmt.Sprintf("%s names unknown parameter %q", s.path, name))
				return m
			}
			return v
		})
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("substituting trial parameters: %s", strings.Join(unknown, "; "))
	}
	return out, nil
}

type stringField struct {
	path  *field.Path
	value *string
}

// substituted are the strings of spec that placeholders may sit in, with their paths.
func substituted(spec *trainer.TrainJobSpec, specPath *field.Path) []stringField {
	t := spec.Trainer
	if t == nil {
		return nil
	}
	p := specPath.Child("trainer")
	var out []stringField
	for i := range t.Command {
		out = append(out, stringField{p.Child("command").Index(i), &t.Command[i]})
	}
	for i := range t.Args {
		out = append(out, stringField{p.Child("args").Index(i), &t.Args[i]})
	}
	for i := range t.Env {
		out = append(out, stringField{p.Child("env").Index(i).Child("value"), &t.Env[i].Value})
	}
	return out
}
