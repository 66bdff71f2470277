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

package statusserver

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TestHostileLoad runs the status server in a process of its own (so its memory is its own)
// and, from other loopback addresses:
//
//  1. holds 1,000 idle keep-alive TLS connections, to measure what one costs (in a server
//     process of their own);
//  2. keeps 20 reporters posting on their keep-alive connections;
//  3. opens 10,000 connections at once from 100 addresses: 40% never start TLS, 30% send their
//     headers a byte at a time, 10% send a 64 KiB header, 10% a 1 MiB body, 10% one request
//     and then idle;
//  4. meanwhile starts a new reporter every 500 ms.
//
// It checks that the established reporters are never refused nor slowed past 5 s (most take
// milliseconds; the slowest wait for a CPU the attack keeps busy on a 2-core machine; before the
// caps, up to 10 s), that new reporters succeed or are refused, within 8 s (their SYNs compete
// with the flood's in the kernel's queue), that every hostile connection is cut off within its
// bound, and that the server's resident memory stays bounded (before the caps it grew by 450 MiB). GANTRY_STATUSSERVER_LOAD=full also waits for
// the idle connections to be closed and adds a 40 s flood from 4 addresses that reconnect as soon
// as they are cut, during which every new reporter must succeed.
//
// The quick form takes about 12 s.
//
//	go test ./internal/statusserver -run TestHostileLoad -v
//	GANTRY_STATUSSERVER_LOAD=full go test ./internal/statusserver -run TestHostileLoad -v -timeout 5m
func TestHostileLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and opens 10,000 connections")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server process's memory from /proc")
	}
	if raceDetector {
		t.Skip("measures memory and latency, which the race detector inflates")
	}
	full := os.Getenv(loadEnv) == "full"
	raiseFileLimit(t, 12_000)
	ctx := t.Context()
	perConn := measureIdleConnections(t, startLoadServer(t))
	t.Logf("one idle keep-alive TLS connection: %.1f KiB of resident memory", perConn)

	srv := startLoadServer(t)
	base := srv.stats(t)
	t.Logf("server at rest: %s", base)
	rep := startReporters(ctx, srv, 20, 2500*time.Millisecond)
	stopNewcomers := make(chan struct{})
	newcomers := startNewcomers(ctx, srv, 500*time.Millisecond, stopNewcomers)
	res := attack(ctx, srv, 100, 100, full)
	close(stopNewcomers)
	peak := srv.stats(t)
	reports, fresh := rep.stop(), <-newcomers
	t.Logf("attack: %s", res)
	t.Logf("server at the peak: %s; resident memory grew %.1f MiB", peak, float64(peak.HWMKiB-base.RSSKiB)/1024)
	t.Logf("established reporters: %s", summarize(reports))
	t.Logf("new reporters during the attack: %s", summarize(fresh))

	checkReports(t, "established reporter", reports, false, 5*time.Second)
	checkReports(t, "new reporter", fresh, true, 8*time.Second)
	res.check(t, full)
	if grown := peak.HWMKiB - base.RSSKiB; grown > 96<<10 {
		t.Errorf("the server's resident memory grew %d MiB under attack, want at most 96 MiB", grown>>10)
	}

	if full {
		sustainedFlood(t, srv)
	}
}

// loadEnv selects the heavy form; loadChildEnv, set by TestHostileLoad, makes
// TestLoadServerProcess serve the certificate in that directory.
const (
	loadEnv      = "GANTRY_STATUSSERVER_LOAD"
	loadChildEnv = "GANTRY_STATUSSERVER_LOAD_CHILD"
)

// TestLoadServerProcess is the server process of TestHostileLoad. It serves with a verifier that
// accepts the token "valid" and an applier that writes nothing, answers "stats" on stdin with its
// memory, and stops when stdin closes.
func TestLoadServerProcess(t *testing.T) {
	dir := os.Getenv(loadChildEnv)
	if dir == "" {
		t.Skip("the server process of TestHostileLoad")
	}
	ctrllog.SetLogger(logr.Discard())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Listener: ln, CertDir: dir, Verifier: staticVerifier("valid"), Applier: nopApplier{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			st := procStats{HeapKiB: m.HeapInuse >> 10, StackKiB: m.StackInuse >> 10, Goroutines: runtime.NumGoroutine()}
			st.RSSKiB, st.HWMKiB = procMemory(os.Getpid())
			data, _ := json.Marshal(st)
			fmt.Printf("stats %s\n", data)
		}
	}()
	fmt.Printf("serving %s\n", ln.Addr())
	if err := s.Start(logr.NewContext(ctx, logr.Discard())); err != nil {
		t.Fatal(err)
	}
}

type staticVerifier string

func (v staticVerifier) Verify(_ context.Context, token, _, _ string) (time.Time, error) {
	if token != string(v) {
		return time.Time{}, errors.New("not the token")
	}
	return time.Now(), nil
}

type nopApplier struct{}

func (nopApplier) ApplyTrainerStatus(context.Context, string, string, time.Time, *trainer.TrainJobTrainerStatus) error {
	return nil
}

// procStats is the server process's memory: resident (now and at its peak), Go heap and stacks.
type procStats struct {
	RSSKiB, HWMKiB, HeapKiB, StackKiB uint64
	Goroutines                        int
}

func (s procStats) String() string {
	return fmt.Sprintf("resident %.1f MiB (peak %.1f), heap %.1f MiB, stacks %.1f MiB, %d goroutines",
		float64(s.RSSKiB)/1024, float64(s.HWMKiB)/1024, float64(s.HeapKiB)/1024, float64(s.StackKiB)/1024, s.Goroutines)
}

func procMemory(pid int) (rss, hwm uint64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseUint(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}

type loadServer struct {
	*testServer
	mu    sync.Mutex
	stdin io.Writer
	out   *bufio.Scanner
}

func startLoadServer(t *testing.T) *loadServer {
	t.Helper()
	ca, dir := servingCertDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadServerProcess$", "-test.v") //nolint:gosec // the test binary itself
	cmd.Env = append(os.Environ(), loadChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	ls := &loadServer{stdin: stdin, out: bufio.NewScanner(stdout)}
	for ls.out.Scan() {
		if addr, ok := strings.CutPrefix(ls.out.Text(), "serving "); ok {
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(ca.PEM)
			ls.testServer = &testServer{addr: addr, roots: roots}
			break
		}
	}
	if ls.testServer == nil {
		t.Fatal("the server process did not start")
	}
	eventually(t, func() error { return handshake(t.Context(), ls.addr) })
	if code, err := ls.report(t.Context(), ls.client("127.0.1.1"), "warmup", "valid"); err != nil || code != http.StatusOK {
		t.Fatalf("warm-up report: %d %v", code, err)
	}
	return ls
}

func (ls *loadServer) stats(t *testing.T) procStats {
	t.Helper()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, err := io.WriteString(ls.stdin, "stats\n"); err != nil {
		t.Fatal(err)
	}
	for ls.out.Scan() {
		if data, ok := strings.CutPrefix(ls.out.Text(), "stats "); ok {
			var st procStats
			if err := json.Unmarshal([]byte(data), &st); err != nil {
				t.Fatal(err)
			}
			return st
		}
	}
	t.Fatal("the server process stopped")
	return procStats{}
}

// measureIdleConnections holds 1,000 keep-alive TLS connections from 40 addresses, each after
// one valid report (a refused one closes its connection), and returns the server's resident memory per connection in KiB.
func measureIdleConnections(t *testing.T, srv *loadServer) float64 {
	t.Helper()
	const n = 1000
	base := srv.stats(t)
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			conn, err := srv.dialTLS(t.Context(), fmt.Sprintf("127.0.4.%d", 1+i%40))
			if err != nil {
				errs <- err
				return
			}
			conns[i] = conn
			path := fmt.Sprintf("/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job-%d/status", i)
			if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer valid\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
				errs <- err
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("opening the idle connections: %v", err)
	}
	held := srv.stats(t)
	for _, c := range conns {
		_ = c.Close()
	}
	t.Logf("server with %d idle connections: %s", n, held)
	return float64(held.RSSKiB-base.RSSKiB) / n
}

// result is one client's outcome: a status code (0 for none), an error, and how long it took.
type result struct {
	code    int
	err     error
	latency time.Duration
}

type reporters struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	out    []result
}

// startReporters starts n clients, each posting for a TrainJob of its own every interval on its
// keep-alive connection, as the SDK does (every 5 s).
func startReporters(ctx context.Context, srv *loadServer, n int, every time.Duration) *reporters {
	ctx, cancel := context.WithCancel(ctx)
	r := &reporters{cancel: cancel}
	for i := range n {
		c := srv.client(fmt.Sprintf("127.0.1.%d", 10+i))
		r.wg.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				start := time.Now()
				code, err := srv.report(ctx, c, fmt.Sprintf("reporter-%d", i), "valid")
				if ctx.Err() != nil {
					return
				}
				r.mu.Lock()
				r.out = append(r.out, result{code: code, err: err, latency: time.Since(start)})
				r.mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	return r
}

func (r *reporters) stop() []result {
	r.cancel()
	r.wg.Wait()
	return r.out
}

// startNewcomers posts from a new connection every interval until stop closes.
func startNewcomers(ctx context.Context, srv *loadServer, every time.Duration, stop <-chan struct{}) <-chan []result {
	done := make(chan []result, 1)
	go func() {
		var out []result
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- out
				return
			case <-tick.C:
			}
			start := time.Now()
			code, err := srv.report(ctx, srv.client(fmt.Sprintf("127.0.3.%d", 1+i%250)), fmt.Sprintf("newcomer-%d", i), "valid")
			out = append(out, result{code: code, err: err, latency: time.Since(start)})
		}
	}()
	return done
}

func summarize(rs []result) string {
	codes := map[string]int{}
	var worst time.Duration
	for _, r := range rs {
		key := strconv.Itoa(r.code)
		if r.err != nil {
			key = "refused"
		}
		codes[key]++
		worst = max(worst, r.latency)
	}
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, fmt.Sprintf("%s: %d", k, codes[k]))
	}
	slices.Sort(keys)
	return fmt.Sprintf("%d requests (%s), slowest %v", len(rs), strings.Join(keys, ", "), worst.Round(time.Millisecond))
}

// checkReports: every report succeeded within bound; a newcomer may instead be refused, and the
// last ones, after the slow connections were cut, succeed.
func checkReports(t *testing.T, who string, rs []result, mayBeRefused bool, bound time.Duration) {
	t.Helper()
	if len(rs) == 0 {
		t.Errorf("no %s ran", who)
	}
	for i, r := range rs {
		switch {
		case r.err != nil && !mayBeRefused:
			t.Errorf("%s %d: %v", who, i, r.err)
		case r.err == nil && r.code != http.StatusOK:
			t.Errorf("%s %d: %d, want 200", who, i, r.code)
		case r.latency > bound:
			t.Errorf("%s %d took %v, want at most %v", who, i, r.latency, bound)
		}
	}
	if mayBeRefused && len(rs) > 0 && rs[len(rs)-1].err != nil {
		t.Errorf("the last %s, after the slow connections were cut, was refused: %v", who, rs[len(rs)-1].err)
	}
}
