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

// Package memlimit gives a Go program in a container a soft memory limit below the container's
// hard one. Go's collector lets the heap grow to about twice what is live between collections;
// near a memory limit that headroom is what gets a container killed, and Go does not read the
// cgroup's limit itself.
package memlimit

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// share of the container's limit the heap may reach before Go collects harder: the rest is the
// binary's pages, stacks and what the runtime has not returned yet.
const share = 0.9

// cgroup files holding the container's memory limit: v2, then v1.
var limitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// FromCgroup sets Go's soft memory limit to 90% of the container's, unless GOMEMLIMIT is set or no
// limit is found. It returns the limit set, 0 when none.
func FromCgroup() int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	for _, f := range limitFiles {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if limit := soft(string(raw)); limit > 0 {
			debug.SetMemoryLimit(limit)
			return limit
		}
		return 0
	}
	return 0
}

// soft is the soft limit for a cgroup limit file's content, 0 when it sets none: "max" (v2), or
// v1's "no limit", the largest page-aligned int64.
func soft(content string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(content), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return int64(float64(n) * share)
}
