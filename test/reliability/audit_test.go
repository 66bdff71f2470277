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

package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// auditEvent is the part of an apiserver audit event (audit.k8s.io/v1, Metadata level) the
// invariants read.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

func (e auditEvent) String() string {
	res := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		res += "/" + e.ObjectRef.Subresource
	}
	return fmt.Sprintf("%s %s %s %s/%s by %s -> %d (audit %s)", e.StageTimestamp.Format(time.RFC3339Nano), e.Verb, res,
		e.ObjectRef.Namespace, e.ObjectRef.Name, e.User.Username, e.ResponseStatus.Code, e.AuditID)
}

// auditSize is where the log ends now: a scenario reads from there on.
func auditSize() int64 {
	info, err := os.Stat(cluster.AuditLog())
	if err != nil {
		return 0
	}
	return info.Size()
}

// readAudit returns the completed events of namespace ns (of every namespace when ns is "")
// written after offset.
func readAudit(offset int64, ns string) ([]auditEvent, error) {
	f, err := os.Open(cluster.AuditLog())
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if e.Stage == "ResponseComplete" && (ns == "" || e.ObjectRef.Namespace == ns) {
			events = append(events, e)
		}
	}
	return events, sc.Err()
}
