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
	"context"
	"errors"
	"os"
)

// auditPolicy records, at Metadata level, every write to the objects Gantry creates or whose
// state it owns (the reliability suite's record of who wrote what), and every request of the
// manager (the e2e suite's record of which RBAC rules it uses) and of the MultiKueue manager's
// Kueue on a worker (the MultiKueue suite's check of MultiKueueWorkerRules), and nothing else: a small log
// that still shows each such request with its user, verb, object and response code.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: trainer.kubeflow.org
    resources: [trainjobs, trainjobs/status]
  - group: jobset.x-k8s.io
    resources: [jobsets]
  - group: ""
    resources: [configmaps, secrets]
  - group: scheduling.x-k8s.io
    resources: [podgroups]
  - group: scheduling.volcano.sh
    resources: [podgroups]
- level: Metadata
  users: ["` + ManagerUser + `", "` + MultiKueueWorkerUser + `"]
- level: None
`

// AuditLog is the apiserver's audit log, written when Settings.Audit is on.
func (c *Cluster) AuditLog() string { return c.path("logs", "audit.log") }

// writeAuditPolicy prepares an apiserver that up starts: the policy, and a new log, so that the
// log holds what this apiserver saw (the apiserver appends to an old one); the last log is kept
// as audit.log.1. Restart (the reliability suite's chaos) does not come here: the log goes on.
func (c *Cluster) writeAuditPolicy(context.Context) error {
	if err := os.MkdirAll(c.path("config"), 0o755); err != nil {
		return err
	}
	if err := os.Rename(c.AuditLog(), c.AuditLog()+".1"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return writeFileAtomic(c.path("config", "audit-policy.yaml"), []byte(auditPolicy), 0o644)
}
