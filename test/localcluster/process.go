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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidRecord identifies a process this package started: its PID alone could be reused by an
// unrelated process once it exits, so the binary and the start time (in clock ticks since boot,
// from /proc) are recorded too and checked before anything is signalled.
type pidRecord struct {
	PID        int       `json:"pid"`
	Exe        string    `json:"exe"`
	StartTicks uint64    `json:"startTicks"`
	Started    time.Time `json:"started"`
}

// alive is true when the recorded process still runs the recorded binary.
func (r *pidRecord) alive() bool {
	if r == nil || r.PID <= 0 {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.PID))
	if err != nil {
		return false
	}
	// A binary replaced on disk (the manager, rebuilt) shows as "<path> (deleted)".
	if strings.TrimSuffix(exe, " (deleted)") != r.Exe {
		return false
	}
	state, ticks, err := procStat(r.PID)
	return err == nil && state != "Z" && ticks == r.StartTicks
}

// procStat returns the state and start time fields of /proc/<pid>/stat.
func procStat(pid int) (string, uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	// The command name (field 2) is parenthesised and may hold spaces; fields count after it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "", 0, errors.New("malformed stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return "", 0, errors.New("malformed stat")
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64) // field 22, starttime
	return fields[0], ticks, err
}

func (c *Cluster) pidFile(name string) string { return c.path("pids", name+".json") }

// record returns the saved PID record of a component, nil if there is none.
func (c *Cluster) record(name string) *pidRecord {
	data, err := os.ReadFile(c.pidFile(name))
	if err != nil {
		return nil
	}
	r := &pidRecord{}
	if json.Unmarshal(data, r) != nil {
		return nil
	}
	return r
}

// process is a component process started by this run; exited closes when it ends.
type process struct {
	rec    *pidRecord
	exited chan struct{}
	err    error
}

// startProcess starts a binary in its own session (so a terminal's Ctrl-C or hang-up does not
// reach it once `up` has returned), appending its output to logs/<name>.log.
func (c *Cluster) startProcess(name, binary string, args, env []string) (*process, error) {
	exe, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(c.logPath(name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	_, _ = fmt.Fprintf(logFile, "==== %s: %s %s\n", time.Now().Format(time.RFC3339), exe, strings.Join(args, " "))
	cmd := exec.Command(exe, args...)
	cmd.Dir = c.StateDir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	_, ticks, err := procStat(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s exited at once; see %s", name, c.logPath(name))
	}
	p.rec = &pidRecord{PID: cmd.Process.Pid, Exe: exe, StartTicks: ticks, Started: time.Now()}
	data, err := json.Marshal(p.rec)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(c.pidFile(name), data, 0o644); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	return p, nil
}

func (c *Cluster) logPath(name string) string { return c.path("logs", name+".log") }

// stopRecorded stops the recorded process of a component, if it still is that process: SIGTERM,
// then SIGKILL after grace. The PID file goes either way.
func (c *Cluster) stopRecorded(name string, grace time.Duration) (bool, error) {
	rec := c.record(name)
	defer func() { _ = os.Remove(c.pidFile(name)) }()
	if !rec.alive() {
		return false, nil
	}
	if err := syscall.Kill(rec.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("stopping %s (pid %d): %w", name, rec.PID, err)
	}
	if waitGone(rec, grace) {
		return true, nil
	}
	c.logf("  %s (pid %d) did not stop within %s; killing it", name, rec.PID, grace)
	return true, sigkill(name, rec)
}

// sigkill kills a recorded process and waits until it is gone.
func sigkill(name string, rec *pidRecord) error {
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", name, rec.PID, err)
	}
	if !waitGone(rec, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) is still running after SIGKILL", name, rec.PID)
	}
	return nil
}

func waitGone(rec *pidRecord, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for rec.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// portFree reports whether nothing listens on 127.0.0.1:port.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// FreePortOffset returns the first offset of start, start+step, ... (attempts of them) at which
// every port is free, so concurrent clusters of different checkouts (CI jobs, worktrees) do not
// collide.
func FreePortOffset(p Ports, start, step, attempts int) (int, error) {
	return FreeFleetPortOffset(p, 1, start, step, attempts)
}

// FreeFleetPortOffset is FreePortOffset for a fleet of n clusters, the i-th at the offset plus
// i*MemberPortSpacing.
func FreeFleetPortOffset(p Ports, n, start, step, attempts int) (int, error) {
	for i := range attempts {
		offset := start + i*step
		if portsFree(p, n, offset) {
			return offset, nil
		}
	}
	return 0, fmt.Errorf("no port offset from %d in steps of %d leaves every port free", start, step)
}

func portsFree(p Ports, n, offset int) bool {
	for member := range n {
		shifted := p.Offset(offset + member*MemberPortSpacing)
		for _, f := range shifted.Fields() {
			if !portFree(*f.Port) {
				return false
			}
		}
	}
	return true
}

// LogTail returns the last n lines of a component's log.
func (c *Cluster) LogTail(name string, n int) string {
	data, err := os.ReadFile(c.logPath(name))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
