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

package cert

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

type pemPair struct{ cert, key []byte }

// servingPair is a serving certificate from ca and its key, and the certificate's serial number.
func servingPair(t *testing.T, ca *utiltesting.TestCA) (pemPair, string) {
	t.Helper()
	dir := t.TempDir()
	serial, err := ca.WriteServingCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	var p pemPair
	for path, into := range map[string]*[]byte{"tls.crt": &p.cert, "tls.key": &p.key} {
		if *into, err = os.ReadFile(filepath.Join(dir, path)); err != nil {
			t.Fatal(err)
		}
	}
	return p, serial.String()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPairWaitsForMatchingFiles: the first read of a directory whose files are missing or apart
// (a certificate written beside the previous key) waits for them to agree instead of failing.
func TestPairWaitsForMatchingFiles(t *testing.T) {
	ca, err := utiltesting.NewTestCA()
	if err != nil {
		t.Fatal(err)
	}
	a, serialA := servingPair(t, ca)
	b, serialB := servingPair(t, ca)
	cases := map[string]struct {
		initial *pemPair // nil: no files yet
		then    pemPair
		want    string // the served certificate's serial number
	}{
		"a matching pair":                   {initial: &a, want: serialA},
		"no files yet":                      {then: a, want: serialA},
		"a certificate ahead of its key":    {initial: &pemPair{cert: b.cert, key: a.key}, then: b, want: serialB},
		"a key ahead of its certificate":    {initial: &pemPair{cert: a.cert, key: b.key}, then: b, want: serialB},
		"a certificate beside an empty key": {initial: &pemPair{cert: a.cert, key: []byte{}}, then: a, want: serialA},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.initial != nil {
				writeFile(t, filepath.Join(dir, "tls.crt"), tc.initial.cert)
				writeFile(t, filepath.Join(dir, "tls.key"), tc.initial.key)
			}
			p := NewPair(dir)
			p.retry = 10 * time.Millisecond
			failed := make(chan struct{}, 1)
			p.failed = func(error) {
				select {
				case failed <- struct{}{}:
				default:
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done, stopped := make(chan error, 1), make(chan struct{})
			go func() {
				defer close(stopped)
				done <- p.Start(ctx)
			}()
			t.Cleanup(func() {
				cancel()
				<-stopped
			})
			if tc.then.cert != nil {
				select {
				case <-failed:
				case <-p.Loaded():
					t.Fatal("loaded a pair that does not agree")
				case err := <-done:
					t.Fatalf("Start returned before the files agreed: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatal("no first read")
				}
				if _, err := p.GetCertificate(nil); err == nil {
					t.Error("a certificate was served before the files agreed")
				}
				writeFile(t, filepath.Join(dir, "tls.crt"), tc.then.cert)
				writeFile(t, filepath.Join(dir, "tls.key"), tc.then.key)
			}
			select {
			case <-p.Loaded():
			case err := <-done:
				t.Fatalf("Start returned before the files agreed: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the pair never loaded")
			}
			got, err := p.GetCertificate(nil)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := x509.ParseCertificate(got.Certificate[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, leaf.SerialNumber.String()); diff != "" {
				t.Errorf("served certificate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPairTellsOnce: a directory whose files never agree is said at Info once, with the reason,
// not at every retry.
func TestPairTellsOnce(t *testing.T) {
	p := NewPair(t.TempDir())
	p.retry, p.tellAfter = time.Millisecond, 0
	attempts := make(chan struct{}, 100)
	p.failed = func(error) {
		select {
		case attempts <- struct{}{}:
		default:
		}
	}
	var mu sync.Mutex
	var infos []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		infos = append(infos, args)
	}, funcr.Options{Verbosity: 0})
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), log))
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = p.Start(ctx)
	}()
	for range 10 {
		select {
		case <-attempts:
		case <-time.After(10 * time.Second):
			t.Fatal("no retries")
		}
	}
	cancel()
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if len(infos) != 1 || !strings.Contains(infos[0], "Still no matching certificate and key") || !strings.Contains(infos[0], "no such file or directory") {
		t.Errorf("Info lines over 10 failed reads: %q, want one naming the reason", infos)
	}
}
