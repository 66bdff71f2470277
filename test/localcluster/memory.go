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

package localcluster

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS is the resident memory of each running component of the cluster, in bytes, by name: what
// a cluster of the multi-cluster layout costs the machine.
func (c *Cluster) RSS() map[string]uint64 {
	out := map[string]uint64{}
	for _, name := range componentNames {
		rec := c.record(name)
		if !rec.alive() {
			continue
		}
		if rss, err := processRSS(rec.PID); err == nil {
			out[name] = rss
		}
	}
	return out
}

// TotalRSS adds up RSS.
func TotalRSS(rss map[string]uint64) uint64 {
	var total uint64
	for _, v := range rss {
		total += v
	}
	return total
}

// processRSS reads VmRSS from /proc/<pid>/status.
func processRSS(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVMRSS(data)
}

// parseVMRSS finds the "VmRSS:   123456 kB" line of a /proc status file.
func parseVMRSS(status []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// MiB formats bytes as mebibytes.
func MiB(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
