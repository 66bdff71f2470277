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

package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// r5Attempts is how many creates R5 tries while the webhook is down.
const r5Attempts = 100

// TestR5WebhookOutage: with the manager (and so its webhooks) down, every create is refused
// with an error that names the webhook, and nothing is stored that the validator would refuse;
// once the manager is back, the same objects are validated.
func TestR5WebhookOutage(t *testing.T) {
	ctx := t.Context()
	ns := fmt.Sprintf("r5-%d", time.Now().Unix()%100000)
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// Every other TrainJob sets a reserved torch variable: the validator refuses it.
	job := func(i int) *trainer.TrainJob {
		tj := jobSpec{name: fmt.Sprintf("job-%03d", i), runtime: runtimeName, nodes: 1}.trainJob(ns)
		if i%2 == 1 {
			tj.Spec.Trainer.Env = []corev1.EnvVar{{Name: "PET_NNODES", Value: "9"}}
		}
		return tj
	}
	if err := cluster.Kill(manager); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := range r5Attempts {
		err := k8sClient.Create(ctx, job(i))
		switch {
		case err == nil:
			t.Errorf("attempt %d: created while the webhook is down", i)
		case !strings.Contains(err.Error(), "failed calling webhook"):
			t.Errorf("attempt %d: the error does not name the webhook: %v", i, err)
		default:
			refused++
		}
	}
	list := &trainer.TrainJobList{}
	if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	t.Logf("R5: %d of %d creates refused while the webhook was down, %d stored", refused, r5Attempts, len(list.Items))
	if len(list.Items) != 0 {
		t.Errorf("%d TrainJobs were stored without admission", len(list.Items))
	}

	if err := cluster.Restart(manager); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, manager, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	// The webhook serves again once the manager is ready: a valid TrainJob is stored, an
	// invalid one is refused with the validator's message.
	if err := createRetrying(ctx, job(0), 30*time.Second); err != nil {
		t.Errorf("a valid TrainJob after the outage: %v", err)
	}
	if err := createRetrying(ctx, job(1), 30*time.Second); err == nil || !strings.Contains(err.Error(), "must not have reserved envs") {
		t.Errorf("an invalid TrainJob after the outage: got %v, want the validator's refusal", err)
	}
}
