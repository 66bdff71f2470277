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
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
)

// DefaultPageSize is how many rows the Jobs page shows at once. In Chromium 156 on a 2-core
// machine a page of all 1,000 rows was DOM-ready in 1.2-2.0 s (most of it table layout), a page of
// 100 in 385-455 ms; newest first, the first page is what a practitioner looks for, and the
// filters narrow the rest.
const DefaultPageSize = 100

// Pager is where a page of the Jobs page sits in the whole list.
type Pager struct {
	// Page and Pages count from 1; an empty list has one empty page.
	Page, Pages int
	// First and Last number the rows shown (1-based, inclusive), out of Total; 0 when none.
	First, Last, Total int
	// Prev and Next link the neighbouring pages; empty at either end.
	Prev, Next string
}

// rows is the slice of the whole list this page shows.
func (p Pager) rows() (from, to int) { return max(p.First-1, 0), p.Last }

// pageFrom reads the page query parameter: 1 when absent.
func pageFrom(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("page %q: want a whole number from 1", v)
	}
	return n, nil
}

// paginate places page of size rows in a list of total; a page past the end shows the last one,
// so a live page whose jobs were deleted does not go blank. size 0 shows everything.
func paginate(total, size, page int) Pager {
	if size <= 0 {
		size = max(total, 1)
	}
	pages := max((total+size-1)/size, 1)
	page = min(max(page, 1), pages)
	from := (page - 1) * size
	p := Pager{Page: page, Pages: pages, Total: total, Last: min(from+size, total)}
	if total > 0 {
		p.First = from + 1
	}
	return p
}

// links fills Prev and Next from the request's query, so the filters carry over.
func (p *Pager) links(q url.Values) {
	at := func(page int) string {
		v := url.Values{}
		maps.Copy(v, q)
		v.Set("page", strconv.Itoa(page))
		if page == 1 {
			v.Del("page")
		}
		return "/jobs?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = at(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = at(p.Page + 1)
	}
}

// thousands writes n with comma separators: 1,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
