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
	"os"
)

// auditPolicy records, at Metadata level, every write to the objects Gantry creates or whose
// state it owns, and nothing else: a small log that still shows every create, update, patch and
// delete, with its user and response code.
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
- level: None
`

// AuditLog is the apiserver's audit log, written when Settings.Audit is on.
func (c *Cluster) AuditLog() string { return c.path("logs", "audit.log") }

func (c *Cluster) writeAuditPolicy(context.Context) error {
	if err := os.MkdirAll(c.path("config"), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(c.path("config", "audit-policy.yaml"), []byte(auditPolicy), 0o644)
}
