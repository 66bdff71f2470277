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

// Package browser drives the web UI in Debian's Chromium with playwright-core (ui.mjs): the
// Go test starts an API server with fixtures, the UI against it and a control endpoint the
// script calls to change the cluster while a page is open.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// chromium is Debian's browser; `make browser-deps` installs it and the npm packages.
const chromium = "/usr/bin/chromium"

func TestBrowser(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, need := range []string{chromium, filepath.Join(dir, "node_modules", "playwright-core"), filepath.Join(dir, "node_modules", "axe-core")} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("%s is missing: run `make browser-deps` (Debian's chromium, npm ci in test/browser)", need)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fwk := &framework.Framework{}
	if err := fwk.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := fwk.Stop(); err != nil {
			t.Log(err)
		}
	}()
	f := &fixture{t: t, ctx: ctx, c: fwk.Client}
	expected := f.create(fwk)

	cs, err := kubernetes.NewForConfig(fwk.Config)
	if err != nil {
		t.Fatal(err)
	}
	logs := newFakeLogs(ui.ClientsetOpener{Clientset: cs})
	main := &uiServer{t: t, cfg: fwk.Config, logs: logs}
	main.start(ctx, "127.0.0.1:0")
	defer main.stop()
	auth := &uiServer{t: t, cfg: fwk.Config, logs: logs, access: ui.NewAccess(cs, "", "")}
	auth.start(ctx, "127.0.0.1:0")
	defer auth.stop()
	token, err := fwk.RequestToken(ctx, expected.UserNamespace, "alice", 3600)
	if err != nil {
		t.Fatal(err)
	}
	controlURL := f.serveControl(main, logs)

	artifacts := os.Getenv("ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(util.RepoRoot(), "_output", "browser")
	}
	expectFile := filepath.Join(t.TempDir(), "expected.json")
	data, _ := json.Marshal(expected)
	if err := os.WriteFile(expectFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", "ui.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "UI_URL="+main.url(), "AUTH_URL="+auth.url(), "AUTH_TOKEN="+token,
		"CONTROL_URL="+controlURL, "EXPECT_FILE="+expectFile, "ARTIFACTS="+artifacts, "CHROMIUM="+chromium)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, testWriter{t}), io.MultiWriter(&out, testWriter{t})
	if err := cmd.Run(); err != nil {
		t.Fatalf("the browser checks failed (%v); screenshots in %s", err, artifacts)
	}
	t.Logf("screenshots in %s", artifacts)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// uiServer is one `gantry ui`, restartable on the same address.
type uiServer struct {
	t      *testing.T
	cfg    *rest.Config
	logs   ui.LogOpener
	access *ui.Access

	mu     sync.Mutex
	addr   string
	cancel context.CancelFunc
	hs     *http.Server
}

func (s *uiServer) url() string { return "http://" + s.addr }

func (s *uiServer) start(ctx context.Context, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cancel := context.WithCancel(ctx)
	store, err := ui.NewStore(s.cfg, ui.StoreOptions{PersistHistory: true, FlushInterval: 200 * time.Millisecond,
		Warn: func(err error) { s.t.Errorf("UI warning: %v", err) }})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := store.Start(c); err != nil {
		s.t.Fatal(err)
	}
	srv, err := ui.NewServer(store, s.logs)
	if err != nil {
		s.t.Fatal(err)
	}
	h := srv.Handler()
	if s.access != nil {
		srv.Access, srv.BaseConfig = s.access, s.cfg
		h = s.access.Wrap(h)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr, s.cancel = ln.Addr().String(), cancel
	s.hs = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.hs.Serve(ln) }()
}

// stop ends the server and its store; the store's last flush saves the progress history.
func (s *uiServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel()
	shutdown, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	_ = s.hs.Shutdown(shutdown)
	_ = s.hs.Close()
}

func (s *uiServer) restart(ctx context.Context) {
	s.stop()
	s.start(ctx, s.addr)
}

// expectation is what ui.mjs checks.
type expectation struct {
	Namespace      string                  `json:"namespace"`
	States         map[string]string       `json:"states"`
	ToComplete     string                  `json:"toComplete"`
	ProgressJob    string                  `json:"progressJob"`
	LogJob         string                  `json:"logJob"`
	LogPods        map[string]string       `json:"logPods"`
	Runtimes       map[string]runtimeUsage `json:"runtimes"`
	UserNamespace  string                  `json:"userNamespace"`
	UserRuntimes   []string                `json:"userRuntimes"`
	SpamJob        string                  `json:"spamJob"`
	ScaleNamespace string                  `json:"scaleNamespace"`
	ScaleJobs      int                     `json:"scaleJobs"`
	// Optimization is the OptimizationJob page's (optimization_fixture_test.go).
	Optimization optimizationExpectation `json:"optimization"`
}

type runtimeUsage struct {
	Jobs       int  `json:"jobs"`
	Deprecated bool `json:"deprecated"`
}

// listStates is `kubectl gantry list -o json`'s states: the UI must show the same.
func listStates(t *testing.T, kubeconfig, ns string) map[string]string {
	var out, errOut bytes.Buffer
	o := cli.NewOptions(&bytes.Buffer{}, &out, &errOut)
	if code := cli.Execute(o, cli.NewRootCommand(o), []string{"--kubeconfig", kubeconfig, "list", "-n", ns, "-o", "json"}); code != 0 {
		t.Fatalf("gantry list: %d: %s", code, errOut.String())
	}
	var doc struct {
		Items []struct{ Name, State string } `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, it := range doc.Items {
		states[it.Name] = it.State
	}
	return states
}

// serveControl serves the endpoints ui.mjs calls to change the cluster.
func (f *fixture) serveControl(main *uiServer, logs *fakeLogs) string {
	mux := http.NewServeMux()
	handle := func(path string, fn func(r *http.Request) error) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			if err := fn(r); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
	}
	handle("/complete", func(r *http.Request) error {
		return f.setStatus(r.URL.Query().Get("job"), func(st *trainer.TrainJobStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue,
				Reason: "AllJobsCompleted", Message: "jobset completed successfully", LastTransitionTime: metav1.Now()})
		})
	})
	handle("/progress", func(r *http.Request) error {
		i, err := strconv.Atoi(r.URL.Query().Get("i"))
		if err != nil {
			return err
		}
		return f.setStatus(r.URL.Query().Get("job"), func(st *trainer.TrainJobStatus) {
			pct := int32(i * 5)
			st.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: &pct,
				Metrics:         []trainer.Metric{{Name: "loss", Value: fmt.Sprintf("%.1f", 2.0-float64(i)*0.1)}},
				LastUpdatedTime: metav1.NewTime(time.Now().Add(time.Duration(i-100) * time.Second))}
		})
	})
	// spam reports n metrics, all named anew: more than the UI charts of one job.
	handle("/spam", func(r *http.Request) error {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil {
			return err
		}
		return f.setStatus(r.URL.Query().Get("job"), func(st *trainer.TrainJobStatus) {
			st.TrainerStatus = &trainer.TrainJobTrainerStatus{LastUpdatedTime: metav1.Now()}
			for i := range n {
				st.TrainerStatus.Metrics = append(st.TrainerStatus.Metrics, trainer.Metric{Name: fmt.Sprintf("metric-%d", i), Value: "1"})
			}
		})
	})
	handle("/log", func(r *http.Request) error {
		logs.append(r.URL.Query().Get("pod"), r.URL.Query().Get("line"))
		return nil
	})
	handle("/restart", func(*http.Request) error {
		main.restart(f.ctx)
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	f.t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func (f *fixture) setStatus(name string, mutate func(*trainer.TrainJobStatus)) error {
	for range 10 {
		tj := &trainer.TrainJob{}
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, tj); err != nil {
			return err
		}
		mutate(&tj.Status)
		err := f.c.Status().Update(f.ctx, tj)
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return errors.New("conflicts: gave up")
}
