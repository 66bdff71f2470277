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

package manifest

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// CheckDocument refuses a YAML or JSON document that the conversion to JSON must not be given:
// over maxBytes, not UTF-8, or with aliases that expand it past maxBytes. The error does not name
// the document; the caller does.
func CheckDocument(doc []byte, maxBytes int) error {
	if len(doc) > maxBytes {
		return fmt.Errorf("%s, over the %s limit", mib(len(doc)), mib(maxBytes))
	}
	if err := checkUTF8(doc); err != nil {
		return err
	}
	// Only an alias ("*name") repeats content, and go-yaml's own check counts nodes, not bytes: a
	// 64 KiB string behind 4,096 aliases passes it and becomes 256 MiB of JSON.
	if bytes.IndexByte(doc, '*') < 0 {
		return nil
	}
	var v any
	if err := yamlv2.Unmarshal(doc, &v); err != nil {
		// Malformed: the caller's decoder says how. Its parser is this one, so it fails too.
		return nil
	}
	if expandedSize(v, maxBytes) < 0 {
		return fmt.Errorf("its YAML aliases expand it past the %s limit", mib(maxBytes))
	}
	return nil
}

// checkUTF8 names the line of the first byte that is not UTF-8. YAML may also be UTF-16, marked by
// a byte order mark: the parser checks that.
func checkUTF8(doc []byte) error {
	if bytes.HasPrefix(doc, []byte{0xfe, 0xff}) || bytes.HasPrefix(doc, []byte{0xff, 0xfe}) || utf8.Valid(doc) {
		return nil
	}
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && size == 1 {
			line := bytes.Count(doc[:i], []byte{'\n'}) + 1
			return fmt.Errorf("line %d: invalid UTF-8 (byte %#x): YAML and JSON must be UTF-8", line, doc[i])
		}
		i += size
	}
	return nil
}

// expandedSize returns budget less the size of v as JSON, roughly, or a negative number as soon
// as that exceeds budget. Aliased strings share memory in v, so the walk is bounded by go-yaml's
// node count, not by the expanded size.
func expandedSize(v any, budget int) int {
	switch v := v.(type) {
	case string:
		return budget - len(v) - 2
	case []any:
		budget -= 2
		for _, item := range v {
			if budget = expandedSize(item, budget-1); budget < 0 {
				return budget
			}
		}
		return budget
	case map[any]any:
		budget -= 2
		for k, item := range v {
			if budget = expandedSize(k, budget-1); budget < 0 {
				return budget
			}
			if budget = expandedSize(item, budget-1); budget < 0 {
				return budget
			}
		}
		return budget
	default:
		// Numbers, booleans and null; a number's digits are short next to any budget here.
		return budget - 8
	}
}

func mib(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
