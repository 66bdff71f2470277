package statusserver

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// requests counts the status server's answers by HTTP code.
var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kubeflow_trainer_status_server_requests_total",
	Help: "Requests to the TrainJob status server, by HTTP response code.",
}, []string{"code"})

func registerMetrics() error {
	if err := ctrlmetrics.Registry.Register(requests); err != nil {
		if _, already := err.(prometheus.AlreadyRegisteredError); !already { //nolint:errorlint // the registry returns this type unwrapped
			return err
		}
	}
	return nil
}
