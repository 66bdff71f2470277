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
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// torchrun of torch 1.x crashes under Python 3.11 and later on its own defaults: Std.from_str
// finds the member of --redirects/--tee ("0" by default) by iterating the IntFlag, and since
// Python 3.11 that iteration leaves out the zero member (and the alias ALL), so "0" reads as
// None and to_map fails with "AttributeError: 'NoneType' object has no attribute 'get'"
// (meta-llama/llama#86, deepspeedai/DeepSpeedExamples#359). torch 2.0, the first release built
// for Python 3.11 (pytorch/pytorch#92319), builds the member from the value. Debian 12's
// python3-torch is 1.13 on Python 3.11. A mapping naming local rank 9 ("9:1", ranks 0-9 are all
// the mapping's syntax allows) parses: every other rank keeps the default, and rank 9, if there
// is one, has its stdout teed, so still on the console as well as in torchrun's log folder.
const (
	envRedirects    = "PET_REDIRECTS"
	envTee          = "PET_TEE"
	torchWorkaround = "9:1"
	// WhyTorch is the rewrite's reason.
	WhyTorch = "torchrun of torch 1.x under Python 3.11+ crashes on its default \"0\"; this mapping means the same"
)

// TorchVersions are the versions an interpreter reports: torch's ("1.13.0a0+gitunknown") and
// its own major.minor ("3.11").
type TorchVersions struct {
	Torch  string
	Python string
}

// torchProbeCode prints Python's and torch's versions without importing torch (a second, not
// the few milliseconds of reading its metadata).
const torchProbeCode = `import sys, importlib.metadata as m; print("%d.%d" % sys.version_info[:2], m.version("torch"))`

// ProbeTorch asks python for its and torch's versions.
func ProbeTorch(python string) (TorchVersions, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", torchProbeCode).Output() //nolint:gosec // the interpreter the step itself runs
	if err != nil {
		return TorchVersions{}, fmt.Errorf("%s: %w", python, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		return TorchVersions{}, fmt.Errorf("%s printed %q, want the Python and torch versions", python, out)
	}
	return TorchVersions{Python: fields[0], Torch: fields[1]}, nil
}

// torchDefect reports whether torch (its version) under python (major.minor) has the defect;
// an unreadable version is taken as without it.
func torchDefect(torch, python string) bool {
	torchMajor, _, ok := versionNumbers(torch)
	if !ok || torchMajor >= 2 {
		return false
	}
	major, minor, ok := versionNumbers(python)
	return ok && (major > 3 || major == 3 && minor >= 11)
}

// versionNumbers reads the major and minor numbers of "1.13.0a0+gitunknown" or "3.11".
func versionNumbers(v string) (int, int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return major, minor, err1 == nil && err2 == nil
}

// fixTorchRedirects sets PET_REDIRECTS and PET_TEE (each that the user set neither in the
// TrainJob nor in this shell) on the steps that launch torchrun with a torch that has the
// defect, and notes it once for the run. Each interpreter is asked once.
func (p *Plan) fixTorchRedirects(opts Options) {
	probe, lookup := opts.TorchProbe, opts.LookupEnv
	if probe == nil {
		probe = ProbeTorch
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	found := map[string]TorchVersions{}
	noted := false
	for i := range p.Steps {
		s := &p.Steps[i]
		python, ok := torchrunPython(s.Command)
		if s.Skip != "" || !ok {
			continue
		}
		var missing []string
		for _, name := range []string{envRedirects, envTee} {
			if _, set := lookup(name); !set && !hasEnv(s.Env, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			continue
		}
		v, asked := found[python]
		if !asked {
			v, _ = probe(python) // no torch to be found: nothing to mend, and the step says why
			found[python] = v
		}
		if !torchDefect(v.Torch, v.Python) {
			continue
		}
		for _, name := range missing {
			s.Env = append(s.Env, EnvVar{Name: name, Value: torchWorkaround})
			s.Rewrites = append(s.Rewrites, Rewrite{Where: "env " + name, To: torchWorkaround, Why: WhyTorch})
		}
		if !noted {
			noted = true
			p.warnf("torch %s under Python %s (%s) crashes in torchrun's default --redirects/--tee (\"'NoneType' object has no attribute 'get'\", fixed in torch 2.0): set %s=%s, the same defaults (set them yourself to choose)",
				v.Torch, v.Python, python, strings.Join(missing, "="+torchWorkaround+" "), torchWorkaround)
		}
	}
}

func hasEnv(env []EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

// torchrunPython finds the interpreter of a command that launches torchrun: torchrun's own
// (its #! line), python -m torch.distributed.run's, or, for a shell that runs torchrun, that of
// the torchrun on PATH.
func torchrunPython(command []string) (string, bool) {
	if len(command) == 0 {
		return "", false
	}
	base := filepath.Base(command[0])
	switch {
	case base == "torchrun":
		return scriptPython(command[0]), true
	case strings.HasPrefix(base, "python"):
		for i, a := range command[1:] {
			if a == "-m" && i+2 < len(command) && strings.HasPrefix(command[i+2], "torch.distributed.") {
				return command[0], true
			}
		}
		return "", false
	}
	for _, a := range command[1:] {
		if strings.Contains(a, "torchrun") || strings.Contains(a, "torch.distributed.run") {
			return scriptPython("torchrun"), true
		}
	}
	return "", false
}

// scriptPython reads the interpreter of a Python script from its #! line ("#!/usr/bin/python3.11",
// "#!/usr/bin/env python3"); python3 when it has none that names Python.
func scriptPython(script string) string {
	const fallback = "python3"
	path, err := exec.LookPath(script)
	if err != nil {
		return fallback
	}
	f, err := os.Open(path)
	if err != nil {
		return fallback
	}
	defer func() { _ = f.Close() }()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return fallback
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		fields = fields[1:]
	}
	if !strings.HasPrefix(filepath.Base(fields[0]), "python") {
		return fallback
	}
	return fields[0]
}
