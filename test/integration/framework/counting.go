package framework

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingClient counts the server-side applies and creates a manager sends, so tests can prove
// that a reconcile with nothing to change writes nothing (a no-op apply would not change
// resourceVersion, and a create of an existing object fails without a trace).
type countingClient struct {
	client.Client
	applies, creates *atomic.Int64
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.applies.Add(1)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.creates.Add(1)
	return c.Client.Create(ctx, obj, opts...)
}

func newCountingClient(applies, creates *atomic.Int64) func(*rest.Config, client.Options) (client.Client, error) {
	return func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		c, err := client.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		return &countingClient{Client: c, applies: applies, creates: creates}, nil
	}
}
