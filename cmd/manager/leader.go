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

package main

import (
	"cmp"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// podNameEnv is set from the pod's name by the downward API (chart, kustomize, local cluster).
const podNameEnv = "POD_NAME"

// leaderIdentity is who holds the Lease. Under the pod's name, a container the kubelet restarts
// after a crash (an OOM kill) is the holder it finds on the Lease and takes it back at once, where
// a fresh identity would wait out the dead holder's lease (15 s by default) with every TrainJob
// waiting too. Another replica, another pod, still waits, so there is never a second leader: one
// pod runs one manager container at a time. Without POD_NAME (a manager run by hand, or on the
// host network, where hostnames repeat) every process is a new holder.
func leaderIdentity() string {
	if pod := os.Getenv(podNameEnv); pod != "" {
		return pod
	}
	host, _ := os.Hostname()
	return host + "_" + string(uuid.NewUUID())
}

// leaderLock is the Lease lock of opts, held as leaderIdentity, on a client of its own whose
// requests time out before the renew deadline (as controller-runtime's lock does), so one hung
// request cannot cost the lease.
func leaderLock(cfg *rest.Config, opts ctrl.Options) (resourcelock.Interface, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	if opts.RenewDeadline != nil {
		cfg.Timeout = max(*opts.RenewDeadline/2, time.Second)
	}
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	coordination, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return resourcelock.New(cmp.Or(opts.LeaderElectionResourceLock, resourcelock.LeasesResourceLock),
		opts.LeaderElectionNamespace, opts.LeaderElectionID, core, coordination,
		resourcelock.ResourceLockConfig{Identity: leaderIdentity()})
}
