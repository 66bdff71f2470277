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

package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// CrashAfterWritePrefix names the failpoint fault "crash-after-write=<point>:<n>": the manager
// kills itself with SIGKILL right after its n-th successful API write at point in this process
// life, the moment a crash loses the most (the write is stored, nothing after it happened).
const CrashAfterWritePrefix = "crash-after-write="

// Write points, by what the write changed.
const (
	PointJobSet    = "jobset"
	PointSnapshot  = "snapshot"
	PointConfigMap = "configmap"
	PointSecret    = "secret"
	PointPodGroup  = "podgroup"
	PointStatus    = "status"
)

// Points are every write point, in the order a build writes them.
var Points = []string{PointSnapshot, PointSecret, PointConfigMap, PointPodGroup, PointJobSet, PointStatus}

// crashPoint is the parsed failpoint.
type crashPoint struct {
	point string
	after int64
	seen  atomic.Int64
	// kill ends the process; a variable so that the unit test can observe it.
	kill func()
}

// CrashAfterWrite is the "crash-after-write=<point>:<n>" fault.
func CrashAfterWrite(point string, n int) string {
	return CrashAfterWritePrefix + point + ":" + strconv.Itoa(n)
}

func parseCrashPoint(faults []string) (*crashPoint, error) {
	for _, f := range faults {
		spec, ok := strings.CutPrefix(f, CrashAfterWritePrefix)
		if !ok {
			continue
		}
		point, count, _ := strings.Cut(spec, ":")
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: want <point>:<n> with n >= 1, got %q", CrashAfterWritePrefix, spec)
		}
		if !slices.Contains(Points, point) {
			return nil, fmt.Errorf("%s: unknown point %q (one of %s)", CrashAfterWritePrefix, point, strings.Join(Points, ", "))
		}
		return &crashPoint{point: point, after: int64(n), kill: sigkillSelf}, nil
	}
	return nil, nil
}

func sigkillSelf() {
	if self, err := os.FindProcess(os.Getpid()); err == nil {
		_ = self.Kill() // SIGKILL on unix
	}
}

// WrapClient returns c with the crash-after-write failpoint when it is injected, c otherwise.
func WrapClient(c client.Client) (client.Client, error) {
	cp, err := parseCrashPoint(enabled)
	if err != nil || cp == nil {
		return c, err
	}
	return &crashingClient{Client: c, cp: cp}, nil
}

// NewClient is a manager's NewClient with the injected client faults.
func NewClient(rc *rest.Config, o client.Options) (client.Client, error) {
	c, err := client.New(rc, o)
	if err != nil {
		return nil, err
	}
	return WrapClient(c)
}

// crashingClient counts successful writes per point and crashes at the configured one.
type crashingClient struct {
	client.Client
	cp *crashPoint
}

// wrote is called after a successful write of obj; status tells a status subresource write.
func (c *crashingClient) wrote(obj runtime.Object, status bool, err error) error {
	if err != nil {
		return err
	}
	if point(c.Scheme(), obj, status) == c.cp.point && c.cp.seen.Add(1) == c.cp.after {
		c.cp.kill()
	}
	return nil
}

// point classifies a write.
func point(s *runtime.Scheme, obj runtime.Object, status bool) string {
	if status {
		return PointStatus
	}
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return ""
	}
	switch gvk.Kind {
	case "JobSet":
		return PointJobSet
	case "Secret":
		return PointSecret
	case "PodGroup":
		return PointPodGroup
	case "ConfigMap":
		if o, ok := obj.(client.Object); ok && strings.HasSuffix(o.GetName(), ref.SnapshotSuffix) {
			return PointSnapshot
		}
		return PointConfigMap
	}
	return ""
}

func (c *crashingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.wrote(obj, false, c.Client.Create(ctx, obj, opts...))
}

func (c *crashingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.wrote(obj, false, c.Client.Update(ctx, obj, opts...))
}

func (c *crashingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.wrote(obj, false, c.Client.Patch(ctx, obj, patch, opts...))
}

func (c *crashingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.wrote(obj, false, c.Client.Delete(ctx, obj, opts...))
}

// Apply is how the applier writes; its configuration carries the object's kind and name.
func (c *crashingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	err := c.Client.Apply(ctx, obj, opts...)
	if u, ok := obj.(interface{ UnstructuredContent() map[string]any }); ok {
		return c.wrote(&unstructured.Unstructured{Object: u.UnstructuredContent()}, false, err)
	}
	return err
}

func (c *crashingClient) Status() client.SubResourceWriter {
	return &crashingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type crashingStatus struct {
	client.SubResourceWriter
	c *crashingClient
}

func (s *crashingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.wrote(obj, true, s.SubResourceWriter.Update(ctx, obj, opts...))
}

func (s *crashingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.wrote(obj, true, s.SubResourceWriter.Patch(ctx, obj, patch, opts...))
}
