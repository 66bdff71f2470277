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
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// requests counts the status server's answers by HTTP code.
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubeflow_trainer_status_server_requests_total",
		Help: "Requests to the TrainJob status server, by HTTP response code.",
	}, []string{"code"})
	// openConnections and connectionsRefused show how close the server is to its connection caps.
	openConnections = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kubeflow_trainer_status_server_connections",
		Help: "Open connections to the TrainJob status server.",
	})
	connectionsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubeflow_trainer_status_server_connections_refused_total",
		Help: "Connections the TrainJob status server closed at once, by the cap that was full: total, address or local.",
	}, []string{"cap"})
)

func registerMetrics() error {
	for _, c := range []prometheus.Collector{requests, openConnections, connectionsRefused} {
		if err := ctrlmetrics.Registry.Register(c); err != nil {
			if _, already := err.(prometheus.AlreadyRegisteredError); !already { //nolint:errorlint // the registry returns this type unwrapped
				return err
			}
		}
	}
	return nil
}
