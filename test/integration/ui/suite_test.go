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

// Package ui runs the web UI's server against an envtest control plane: the pages, the live
// streams and the local login, over HTTP (the browser suite drives the same pages in Chromium).
package ui

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/integration/framework"
)

var (
	fwk       = &framework.Framework{}
	k8sClient client.Client
	ctx       context.Context
	cancel    context.CancelFunc
	server    *httptest.Server
	store     *ui.Store
)

func TestUI(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "web UI suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx, cancel = context.WithCancel(context.Background())
	fwk.StartSuite(ctx)
	// Cleanups run last first: the informers stop before the control plane does.
	ginkgo.DeferCleanup(func() { cancel() })
	k8sClient = fwk.Client
	var err error
	store, err = ui.NewStore(fwk.Config, ui.StoreOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(store.Start(ctx)).To(gomega.Succeed())
	cs, err := kubernetes.NewForConfig(fwk.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	srv, err := ui.NewServer(store, ui.ClientsetOpener{Clientset: cs})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	server = httptest.NewServer(srv.Handler())
	ginkgo.DeferCleanup(server.Close)
})

// get fetches a page and returns its status and body.
func get(path string) (int, string) {
	ginkgo.GinkgoHelper()
	resp, err := http.Get(server.URL + path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return resp.StatusCode, string(body)
}

// event is one server-sent event.
type event struct{ name, data string }

// subscribe opens a live stream; its events arrive on the channel until the spec ends.
func subscribe(path string) <-chan event {
	ginkgo.GinkgoHelper()
	c, stop := context.WithCancel(ctx)
	ginkgo.DeferCleanup(stop)
	req, err := http.NewRequestWithContext(c, http.MethodGet, server.URL+path, nil)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // DeferCleanup closes it, after the reader goroutine
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(resp.Body.Close)
	gomega.Expect(resp.Header.Get("Content-Type")).To(gomega.Equal("text/event-stream"))
	out := make(chan event, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		var ev event
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || len(data) > 0 {
					ev.data = strings.Join(data, "\n")
					out <- ev
				}
				ev, data = event{}, nil
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return out
}

// next waits for the next event of that name.
func next(events <-chan event, name string, within time.Duration) event {
	ginkgo.GinkgoHelper()
	deadline := time.After(within)
	for {
		select {
		case ev := <-events:
			if ev.name == name {
				return ev
			}
		case <-deadline:
			ginkgo.Fail("no " + name + " event within " + within.String())
		}
	}
}
