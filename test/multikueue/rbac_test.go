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

package multikueue

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/gantry-ml/gantry/test/localcluster"
)

// After the specs, each worker's audit log holds every request the manager's Kueue made there:
// none may have been refused, so localcluster.MultiKueueWorkerRules (what docs/install.md tells
// administrators to grant) is enough. The rules no request used are printed, not failed: a
// permission Kueue needs only on a path no spec takes (an update of a TrainJob) would fail there.
var _ = ginkgo.AfterSuite(func() {
	if manager == nil {
		return
	}
	for _, w := range workers {
		events, err := readAudit(w.lc.AuditLog())
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s: the audit log (bring the layout up with --audit)", w.name)
		var refused []string
		used := map[string]bool{}
		for _, e := range events {
			if e.User.Username != localcluster.MultiKueueWorkerUser {
				continue
			}
			if e.ResponseStatus.Code == 403 {
				refused = append(refused, e.String())
			}
			used[e.permission()] = true
		}
		gomega.Expect(used).NotTo(gomega.BeEmpty(), "%s's audit log records no request of %s", w.name, localcluster.MultiKueueWorkerUser)
		gomega.Expect(refused).To(gomega.BeEmpty(), "requests of the manager's Kueue %s refused", w.name)
		var unused []string
		for _, r := range localcluster.MultiKueueWorkerRules {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if p := r.APIGroups[0] + "/" + res + " " + v; !used[p] {
						unused = append(unused, p)
					}
				}
			}
		}
		ginkgo.GinkgoWriter.Printf("%s: the manager's Kueue used %s; granted and not used: %s\n", w.name, keys(used), strings.Join(unused, ", "))
	}
})

// auditEvent is what the check reads of an audit event.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

func (e auditEvent) permission() string {
	res := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		res += "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.APIGroup + "/" + res + " " + e.Verb
}

func (e auditEvent) String() string {
	return fmt.Sprintf("%s %s/%s -> %d", e.permission(), e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code)
}

// readAudit reads a worker's audit log and the one before it (audit.log.1: a worker the
// failover spec stopped started a new log when it came back).
func readAudit(path string) ([]auditEvent, error) {
	var out []auditEvent
	found := false
	for _, p := range []string{path + ".1", path} {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e auditEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if e.Stage == "ResponseComplete" || e.Stage == "ResponseStarted" && e.Verb == "watch" {
				out = append(out, e)
			}
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", path, os.ErrNotExist)
	}
	return out, nil
}

func keys(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(slices.Compact(out), ", ")
}
