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

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every Linux
// architecture Go supports (it is fixed by the kernel ABI, not by CONFIG_HZ).
const clockTicks = 100

// procStat is what /proc says about one process.
type procStat struct {
	// CPUSeconds is user plus system time (utime+stime of /proc/<pid>/stat).
	CPUSeconds float64
	// PeakRSSBytes is VmHWM of /proc/<pid>/status, the peak resident set size.
	PeakRSSBytes int64
	// RSSBytes is VmRSS, the current resident set size; RSSAnonBytes and RSSFileBytes split it
	// into memory the process allocated and mapped files (its binary's pages).
	RSSBytes     int64
	RSSAnonBytes int64
	RSSFileBytes int64
	// PPID and Comm identify the process.
	PPID int
	Comm string
}

func readProcStat(pid int) (procStat, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return procStat{}, err
	}
	s, err := parseStat(stat)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return procStat{}, err
	}
	m := parseStatus(status)
	s.PeakRSSBytes, s.RSSBytes, s.RSSAnonBytes, s.RSSFileBytes = m["VmHWM"], m["VmRSS"], m["RssAnon"], m["RssFile"]
	return s, nil
}

// parseStat reads comm, ppid, utime and stime. comm may hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(data []byte) (procStat, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("malformed: %q", data)
	}
	fields := strings.Fields(string(data[end+1:]))
	// After comm: state(3) ppid(4) ... utime(14) stime(15), so utime is fields[11].
	if len(fields) < 13 {
		return procStat{}, fmt.Errorf("only %d fields", len(fields))
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, err
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return procStat{}, err
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	if err != nil {
		return procStat{}, err
	}
	return procStat{
		CPUSeconds: float64(utime+stime) / clockTicks,
		PPID:       ppid,
		Comm:       string(data[open+1 : end]),
	}, nil
}

// parseStatus reads the kB fields of /proc/<pid>/status (VmHWM, VmRSS, RssAnon, ...) as bytes.
func parseStatus(data []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		out[key] = kb * 1024
	}
	return out
}

// childPIDs lists the direct children of ppid whose command name is one of names.
func childPIDs(ppid int, names ...string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s, err := parseStat(data)
		if err != nil || s.PPID != ppid {
			continue
		}
		for _, n := range names {
			if s.Comm == n {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// loadAverage is the 1-minute load average from /proc/loadavg, recorded with every figure:
// the machine is shared, and a busy one makes every time longer.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
