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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// memberFacts is what a spec of the layout relies on per member.
type memberFacts struct {
	Name          string
	Role          Role
	APIServer     int
	Nodes         int
	Kueue         bool
	MultiKueue    bool
	WithoutGantry bool
}

func TestMultiKueueLayout(t *testing.T) {
	base := DefaultSettings()
	base.Nodes.Count = 2
	port := base.Ports.APIServer
	cases := map[string]struct {
		withoutGantry string
		want          []memberFacts
		wantErr       bool
	}{
		"a manager and two workers, each a member's spacing of ports apart": {want: []memberFacts{
			{Name: ManagerName, Role: RoleManager, APIServer: port, Nodes: 1, Kueue: true, MultiKueue: true},
			{Name: Worker1Name, Role: RoleWorker, APIServer: port + MemberPortSpacing, Nodes: 2, Kueue: true},
			{Name: Worker2Name, Role: RoleWorker, APIServer: port + 2*MemberPortSpacing, Nodes: 2, Kueue: true},
		}},
		"a worker without Gantry": {withoutGantry: Worker2Name, want: []memberFacts{
			{Name: ManagerName, Role: RoleManager, APIServer: port, Nodes: 1, Kueue: true, MultiKueue: true},
			{Name: Worker1Name, Role: RoleWorker, APIServer: port + MemberPortSpacing, Nodes: 2, Kueue: true},
			{Name: Worker2Name, Role: RoleWorker, APIServer: port + 2*MemberPortSpacing, Nodes: 2, Kueue: true, WithoutGantry: true},
		}},
		"the manager cannot go without Gantry": {withoutGantry: ManagerName, wantErr: true},
		"an unknown worker":                    {withoutGantry: "worker3", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			members, err := MultiKueueLayout(base, tc.withoutGantry)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %t", err, tc.wantErr)
			}
			var got []memberFacts
			for _, m := range members {
				got = append(got, memberFacts{Name: m.Name, Role: m.Role, APIServer: m.Settings.Ports.APIServer, Nodes: m.Settings.Nodes.Count,
					Kueue: m.Settings.Kueue, MultiKueue: m.Settings.MultiKueue, WithoutGantry: m.Settings.WithoutGantry})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("members (-want,+got):\n%s", diff)
			}
			if err == nil {
				if err := (&Fleet{Members: members}).Validate(); err != nil {
					t.Errorf("the layout does not validate: %v", err)
				}
			}
		})
	}
}

func TestFleetValidate(t *testing.T) {
	layout := func() []Member {
		m, err := MultiKueueLayout(DefaultSettings(), "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := map[string]struct {
		edit    func([]Member) []Member
		wantErr string
	}{
		"the layout": {edit: func(m []Member) []Member { return m }},
		"two members on the same ports": {
			edit:    func(m []Member) []Member { m[2].Settings.Ports = m[1].Settings.Ports; return m },
			wantErr: "worker2's port apiserver",
		},
		"a name twice": {
			edit:    func(m []Member) []Member { m[2].Name = Worker1Name; return m },
			wantErr: "two members are named worker1",
		},
		"no manager": {
			edit:    func(m []Member) []Member { return m[1:] },
			wantErr: "a fleet has one manager, not 0",
		},
		"a MultiKueue manager without Kueue": {
			edit:    func(m []Member) []Member { m[0].Settings.Kueue = false; return m },
			wantErr: "manager: a MultiKueue manager runs Kueue: set Kueue too",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := (&Fleet{Members: tc.edit(layout())}).Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("Validate: %q, want one containing %q", got, tc.wantErr)
			}
		})
	}
}

func TestParseVMRSS(t *testing.T) {
	cases := map[string]struct {
		status  string
		want    uint64
		wantErr bool
	}{
		"a process":       {status: "Name:\tetcd\nVmPeak:\t  99 kB\nVmRSS:\t   123456 kB\nThreads:\t12\n", want: 123456 * 1024},
		"a zombie":        {status: "Name:\tgone\nState:\tZ (zombie)\n", wantErr: true},
		"another unit":    {status: "VmRSS:\t 12 MB\n", wantErr: true},
		"not a number":    {status: "VmRSS:\t twelve kB\n", wantErr: true},
		"an empty status": {status: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseVMRSS([]byte(tc.status))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" && !tc.wantErr {
				t.Errorf("bytes (-want,+got):\n%s", diff)
			}
		})
	}
}
