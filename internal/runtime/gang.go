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

package runtime

import (
	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// GangSize is the size of the TrainJob's gang: every pod of every replicated job, initializers
// included, and the resources they request together. Gang schedulers admit all of them or none.
func (i *Info) GangSize() (int32, corev1.ResourceList) {
	var members int32
	total := corev1.ResourceList{}
	for _, ps := range i.PodSets {
		pods := ps.Replicas * ps.Count
		members += pods
		for name, q := range ps.SinglePodRequests {
			each := q.AsDec()
			times := new(inf.Dec).Mul(each, inf.NewDec(int64(pods), 0))
			sum := total[name]
			sum.Add(*resource.NewDecimalQuantity(*times, q.Format))
			total[name] = sum
		}
	}
	return members, total
}
