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

// Command progress-reporter is the local cluster's stand-in for training code that reports
// progress: kwok's simulated pods run nothing, so for each running TrainJob pod that has the
// status server's env (one per TrainJob, its lowest rank) this process requests the token the
// kubelet would project, reads the CA the pod mounts, and POSTs progress, ETA and a loss
// falling along a documented curve (curve.go) to the URL of the pod's env, every --interval and
// a last time just before kwok completes the pod. See docs/local-cluster.md. It is test
// machinery: the manager never links it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(); err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the cluster's administrator kubeconfig")
	health := flag.String("health-address", "127.0.0.1:8091", "serve /healthz here")
	podDuration := flag.Duration("pod-duration", 5*time.Second, "how long kwok runs a pod without the sim.gantry.dev/duration annotation (the cluster's --pod-duration)")
	interval := flag.Duration("interval", time.Second, "how often a TrainJob reports (the status server allows one a second after a burst of 10)")
	finalLead := flag.Duration("final-lead", 500*time.Millisecond, "how long before kwok completes the pod the last report is sent")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Only running pods report; the apiserver filters the rest out of the watch.
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "status.phase=" + string(corev1.PodRunning)
	}))
	pods := factory.Core().V1().Pods()
	lister := pods.Lister()
	_ = pods.Informer()
	var ready atomic.Bool
	if err := serveHealth(ctx, *health, &ready); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the %v cache did not sync", typ)
		}
	}
	ready.Store(true)
	r := newReporter(newSender(kubeAPI{cs}), schedule{interval: *interval, finalLead: *finalLead}, *podDuration)
	log.Printf("reporting progress for running TrainJob pods (interval %s, pod duration %s)", *interval, *podDuration)
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			list, err := lister.List(labels.Everything())
			if err != nil {
				return err
			}
			r.tick(ctx, list)
		}
	}
}

// serveHealth answers /healthz with 200 once ready, until ctx ends.
func serveHealth(ctx context.Context, addr string, ready *atomic.Bool) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "the pod cache has not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("health server: %v", err)
		}
	}()
	return nil
}
