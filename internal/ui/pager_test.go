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

package ui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPaginate(t *testing.T) {
	q := url.Values{"ns": {"team-a"}, "state": {"Running"}}
	cases := []struct {
		name              string
		total, size, page int
		want              Pager
	}{
		{name: "empty list: one empty page", total: 0, size: 100, page: 1,
			want: Pager{Page: 1, Pages: 1}},
		{name: "fits on one page", total: 25, size: 100, page: 1,
			want: Pager{Page: 1, Pages: 1, First: 1, Last: 25, Total: 25}},
		{name: "first of ten", total: 1000, size: 100, page: 1,
			want: Pager{Page: 1, Pages: 10, First: 1, Last: 100, Total: 1000, Next: "/jobs?ns=team-a&page=2&state=Running"}},
		{name: "middle", total: 1000, size: 100, page: 5,
			want: Pager{Page: 5, Pages: 10, First: 401, Last: 500, Total: 1000,
				Prev: "/jobs?ns=team-a&page=4&state=Running", Next: "/jobs?ns=team-a&page=6&state=Running"}},
		{name: "second links back to the bare first", total: 150, size: 100, page: 2,
			want: Pager{Page: 2, Pages: 2, First: 101, Last: 150, Total: 150, Prev: "/jobs?ns=team-a&state=Running"}},
		{name: "past the end shows the last page", total: 1001, size: 100, page: 40,
			want: Pager{Page: 11, Pages: 11, First: 1001, Last: 1001, Total: 1001, Prev: "/jobs?ns=team-a&page=10&state=Running"}},
		{name: "size 0 shows everything", total: 1000, size: 0, page: 3,
			want: Pager{Page: 1, Pages: 1, First: 1, Last: 1000, Total: 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := paginate(tc.total, tc.size, tc.page)
			got.links(q)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("paginate(%d, %d, %d) (-want +got):\n%s", tc.total, tc.size, tc.page, diff)
			}
			wantFrom, wantTo := 0, 0
			if got.Total > 0 {
				wantFrom, wantTo = got.First-1, got.Last
			}
			if from, to := got.rows(); from != wantFrom || to != wantTo {
				t.Errorf("rows [%d:%d], want [%d:%d]", from, to, wantFrom, wantTo)
			}
		})
	}
}

func TestPageFrom(t *testing.T) {
	cases := []struct {
		query   string
		want    int
		wantErr string
	}{
		{query: "", want: 1},
		{query: "page=3", want: 3},
		{query: "page=0", wantErr: `page "0": want a whole number from 1`},
		{query: "page=-2", wantErr: `page "-2": want a whole number from 1`},
		{query: "page=two", wantErr: `page "two": want a whole number from 1`},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			got, err := pageFrom(httptest.NewRequest(http.MethodGet, "/jobs?"+tc.query, nil))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("page = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
