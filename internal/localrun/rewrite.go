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
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// rewriter changes the values of the render that name the cluster: pod DNS names become
// 127.0.0.1, container ports free loopback ports, mount paths folders of the workdir, and the
// status server URL the run's own.
type rewriter struct {
	hosts     *regexp.Regexp
	ports     map[int32]int32
	loopPorts *regexp.Regexp
	workdir   string
	statusURL string
}

func newRewriter(js *jobset.JobSet, opts Options, p *Plan) (*rewriter, error) {
	// <jobset>-<replicated job>-<job index>-<index>.<subdomain>, with any suffix of the FQDN.
	hosts := regexp.MustCompile(`\b` + regexp.QuoteMeta(js.Name) + `-[a-z0-9-]+-[0-9]+-[0-9]+\.` + regexp.QuoteMeta(subdomain(js)) + `(\.[A-Za-z0-9-]+)*`)
	rw := &rewriter{hosts: hosts, ports: map[int32]int32{}, loopPorts: regexp.MustCompile(`\b(127\.0\.0\.1|localhost):([0-9]+)\b`),
		workdir: opts.Workdir, statusURL: opts.StatusURL}
	var declared []int32
	for _, rj := range js.Spec.ReplicatedJobs {
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			for _, port := range c.Ports {
				if !slices.Contains(declared, port.ContainerPort) {
					declared = append(declared, port.ContainerPort)
				}
			}
		}
	}
	slices.Sort(declared)
	for _, from := range declared {
		if opts.FreePort == nil {
			rw.ports[from] = from
			continue
		}
		to, err := opts.FreePort()
		if err != nil {
			return nil, fmt.Errorf("choosing a loopback port for container port %d: %w", from, err)
		}
		rw.ports[from] = to
		p.Ports = append(p.Ports, PortMapping{From: from, To: to})
	}
	return rw, nil
}

// VolumeDir is the folder standing in for the volume name.
func VolumeDir(workdir, name string) string {
	return filepath.Join(workdir, "volumes", name)
}

// value rewrites one value; why says which rewrites applied.
func (rw *rewriter) value(v string, portVar bool, c *corev1.Container) (string, []string) {
	var why []string
	out := rw.hosts.ReplaceAllString(v, "127.0.0.1")
	if out != v {
		why = append(why, WhyHost)
	}
	moved := rw.loopPorts.ReplaceAllStringFunc(out, func(m string) string {
		host, p, _ := strings.Cut(m, ":")
		port, err := strconv.ParseInt(p, 10, 32)
		if to, ok := rw.ports[int32(port)]; ok && err == nil {
			return host + ":" + strconv.Itoa(int(to))
		}
		return m
	})
	if portVar {
		if port, err := strconv.ParseInt(out, 10, 32); err == nil {
			if to, ok := rw.ports[int32(port)]; ok {
				moved = strconv.Itoa(int(to))
			}
		}
	}
	if moved != out {
		why, out = append(why, WhyPort), moved
	}
	if c != nil {
		if p := rw.mountPath(out, c); p != out {
			why, out = append(why, WhyPath), p
		}
	}
	return out, why
}

// mountPath maps a path under one of c's mounts (the longest that matches) into the workdir: the
// whole value, or what follows the first "=" (key=/path and --flag=/path arguments).
func (rw *rewriter) mountPath(v string, c *corev1.Container) string {
	if key, path, ok := strings.Cut(v, "="); ok && strings.HasPrefix(path, "/") {
		return key + "=" + rw.mountedPath(path, c)
	}
	return rw.mountedPath(v, c)
}

func (rw *rewriter) mountedPath(v string, c *corev1.Container) string {
	// The path as the container resolves it: "/data/../../etc" is not under the mount /data (it
	// stays as written), and a rewritten path never leaves its volume's folder.
	resolved := v
	if hasBackstep(v) {
		resolved = path.Clean(v)
	}
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mp := strings.TrimSuffix(m.MountPath, "/")
		if (resolved == mp || strings.HasPrefix(resolved, mp+"/")) && (best == nil || len(mp) > len(strings.TrimSuffix(best.MountPath, "/"))) {
			best = m
		}
	}
	if best == nil {
		return v
	}
	dir := filepath.Join(VolumeDir(rw.workdir, best.Name), best.SubPath)
	return dir + strings.TrimPrefix(resolved, strings.TrimSuffix(best.MountPath, "/"))
}

func (rw *rewriter) record(s *Step, where, from, to string, why []string) {
	if from != to {
		s.Rewrites = append(s.Rewrites, Rewrite{Where: where, From: from, To: to, Why: strings.Join(why, "; ")})
	}
}

func (rw *rewriter) env(s *Step, env []EnvVar, c *corev1.Container) []EnvVar {
	out := make([]EnvVar, len(env))
	for i, e := range env {
		v, why := rw.value(e.Value, e.Name == "PORT" || strings.HasSuffix(e.Name, "_PORT"), c)
		if e.Name == trainjobstatus.EnvServerURL && rw.statusURL != "" {
			v, why = rw.statusURL, []string{WhyStatus}
		}
		rw.record(s, "env "+e.Name, e.Value, v, why)
		out[i] = EnvVar{Name: e.Name, Value: v}
	}
	return out
}

func (rw *rewriter) command(s *Step, args []string, c *corev1.Container) []string {
	out := make([]string, len(args))
	for i, a := range args {
		v, why := rw.value(a, false, c)
		rw.record(s, fmt.Sprintf("command[%d]", i), a, v, why)
		out[i] = v
	}
	return out
}

func (rw *rewriter) path(s *Step, where, v string, c *corev1.Container) string {
	if v == "" {
		return ""
	}
	out := rw.mountPath(v, c)
	rw.record(s, where, v, out, []string{WhyPath})
	return out
}

// file rewrites the pod DNS names in a file a volume holds (an MPI hostfile).
func (rw *rewriter) file(content string) (string, bool) {
	out := rw.hosts.ReplaceAllString(content, "127.0.0.1")
	return out, out != content
}
