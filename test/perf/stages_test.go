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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBreakdown(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	stamp := func(n int) string { return ms(n).Format(time.RFC3339Nano) }
	event := func(user, verb, resource, name string, recv, done, code int, annotations string) string {
		return fmt.Sprintf(`{"stage":"ResponseComplete","verb":%q,"user":{"username":%q},"objectRef":{"resource":%q,"namespace":%q,"name":%q},`+
			`"responseStatus":{"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q,"annotations":{%s}}`,
			verb, user, resource, benchNamespace, name, code, stamp(recv), stamp(done), annotations)
	}
	// tj-00001: create 0-10, snapshot 30-40, apply 45-60, seen at 70. tj-00002 is slow: its
	// create took 700 ms, 600 of them in the webhook, and its apply waited. tj-00003 has no
	// JobSet apply yet and is left out; a failed snapshot create (409) is not its first.
	log := strings.Join([]string{
		event("harness", "create", "trainjobs", "tj-00001", 0, 10, 201, ""),
		event(managerUser, "create", "configmaps", "tj-00001-runtime-snapshot", 30, 40, 201, ""),
		event(managerUser, "patch", "jobsets", "tj-00001", 45, 60, 201, ""),
		event(managerUser, "patch", "jobsets", "tj-00001", 500, 510, 200, ""), // a later apply: not the first
		event("harness", "create", "trainjobs", "tj-00002", 0, 700, 201, `"apiserver.latency.k8s.io/validating-webhook":"600ms"`),
		event(managerUser, "create", "configmaps", "tj-00002-runtime-snapshot", 710, 720, 409, ""),
		event(managerUser, "create", "configmaps", "tj-00002-runtime-snapshot", 730, 740, 201, ""),
		event(managerUser, "patch", "jobsets", "tj-00002", 1000, 1100, 201, ""),
		event(managerUser, "patch", "trainjobs", "tj-00002", 1200, 1210, 200, ""), // not a JobSet
		event("harness", "create", "trainjobs", "tj-00003", 0, 5, 201, ""),
		event("harness", "create", "configmaps", "unrelated", 0, 5, 201, ""),
	}, "\n")
	times, err := parseStageTimes(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	got := breakdown(times, map[string]time.Time{"tj-00001": ms(70), "tj-00002": ms(1150), "tj-00003": ms(80)})
	stage := func(i int, fast, slow float64) Stage {
		return Stage{Name: stageNames[i][0], Holds: stageNames[i][1], SlowestMean: slow,
			Summary: summarize([]float64{fast, slow})}
	}
	want := &Breakdown{
		TrainJobs: 2, Slowest: 1, SlowCreates: 1, SlowCreateWebhookMean: 600,
		Stages: []Stage{
			stage(0, 10, 700), stage(1, 20, 30), stage(2, 10, 10), stage(3, 5, 260), stage(4, 15, 100), stage(5, 10, 50),
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("breakdown (-want,+got):\n%s", diff)
	}
}
