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
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"time"
)

// writeVerbs are the verbs that change an object.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// auditEvent is the part of an audit.k8s.io/v1 Event the harness reads.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time         `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time         `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations"`
}

// WriteRow counts the manager's writes of one verb on one resource.
type WriteRow struct {
	// Verb is the apiserver's verb: create, update, patch (server-side apply is a patch), delete.
	Verb string `json:"verb"`
	// Resource is resource[.group][/subresource], e.g. trainjobs.trainer.kubeflow.org/status.
	Resource string `json:"resource"`
	// Object tells the objects of one resource apart by name, with the TrainJob's name written
	// <trainjob>: <trainjob>-runtime-snapshot and <trainjob>-mpi-hostfile are both ConfigMaps.
	Object string `json:"object,omitempty"`
	// PerTrainJob is true for writes in the benchmark's namespace, which the per-TrainJob
	// figure counts; the others are the manager's own bookkeeping (leader election lease).
	PerTrainJob bool  `json:"perTrainJob"`
	Count       int   `json:"count"`
	Failed      int   `json:"failed"`
	Codes       []int `json:"codes,omitempty"`
}

// auditWrites reads the audit log and counts the completed writes of user (the manager) whose
// response time falls in [from, to), by verb and resource. Other requests of user (a local
// cluster's policy records its reads too) are not counted.
func auditWrites(path, user string, from, to time.Time) ([]WriteRow, error) {
	return readAuditLog(path, func(r io.Reader) ([]WriteRow, error) { return countWrites(r, user, from, to) })
}

// readAuditLog opens the audit log at path for parse.
func readAuditLog[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer func() { _ = f.Close() }()
	return parse(f)
}

// eachEvent calls f with every event of an audit log.
func eachEvent(r io.Reader, f func(auditEvent)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("parsing the audit log: %w", err)
		}
		f(e)
	}
	return sc.Err()
}

func countWrites(r io.Reader, user string, from, to time.Time) ([]WriteRow, error) {
	type key struct {
		verb, resource, object string
		perTrainJob            bool
	}
	rows := map[key]*WriteRow{}
	err := eachEvent(r, func(e auditEvent) {
		if e.Stage != "ResponseComplete" || e.User.Username != user || e.ObjectRef == nil || !slices.Contains(writeVerbs, e.Verb) ||
			e.StageTimestamp.Before(from) || !e.StageTimestamp.Before(to) {
			return
		}
		k := key{verb: e.Verb, resource: resourceName(e), perTrainJob: e.ObjectRef.Namespace == benchNamespace}
		if k.perTrainJob {
			k.object = objectRole(e.ObjectRef.Name)
		}
		row, ok := rows[k]
		if !ok {
			row = &WriteRow{Verb: k.verb, Resource: k.resource, Object: k.object, PerTrainJob: k.perTrainJob}
			rows[k] = row
		}
		row.Count++
		if e.ResponseStatus != nil && e.ResponseStatus.Code >= 300 {
			row.Failed++
			if !slices.Contains(row.Codes, e.ResponseStatus.Code) {
				row.Codes = append(row.Codes, e.ResponseStatus.Code)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]WriteRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b WriteRow) int {
		if a.PerTrainJob != b.PerTrainJob {
			if a.PerTrainJob {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Verb, b.Verb))
	})
	return out, nil
}

func resourceName(e auditEvent) string {
	name := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		name += "." + e.ObjectRef.APIGroup
	}
	if e.ObjectRef.Subresource != "" {
		name += "/" + e.ObjectRef.Subresource
	}
	return name
}

// trainJobNamePrefix matches the names trainJobName gives.
var trainJobNamePrefix = regexp.MustCompile(`^tj-[0-9]{5}`)

// objectRole writes a TrainJob's name in an object name as <trainjob>; a name the apiserver did
// not record (a create that failed early) is "?".
func objectRole(name string) string {
	if name == "" {
		return "?"
	}
	return trainJobNamePrefix.ReplaceAllString(name, "<trainjob>")
}

// perTrainJob sums the rows the per-TrainJob figure counts.
func perTrainJob(rows []WriteRow) int {
	n := 0
	for _, r := range rows {
		if r.PerTrainJob {
			n += r.Count
		}
	}
	return n
}
