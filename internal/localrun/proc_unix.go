//go:build unix

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

package localrun

import (
	"errors"
	"os/exec"
	"syscall"
)

// newProcessGroup puts the step's processes in a group of their own, so a stop reaches the
// workers a launcher (torchrun, mpirun) started.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// exitStatus is the step's exit code, 128+n for a signal as a shell reports it.
func exitStatus(cmd *exec.Cmd, err error) (int, string) {
	// ErrWaitDelay: the step exited, and a process it left holds its output; its code stands.
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && (!errors.Is(err, exec.ErrWaitDelay) || cmd.ProcessState == nil) {
		return 1, ""
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return cmd.ProcessState.ExitCode(), ""
}
