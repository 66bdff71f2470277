package runtime

import corev1 "k8s.io/api/core/v1"

// GangSize is the size of the TrainJob's gang: every pod of every replicated job, initializers
// included, and the resources they request together. Gang schedulers admit all of them or none.
func (i *Info) GangSize() (int32, corev1.ResourceList) {
	var members int32
	total := corev1.ResourceList{}
	for _, ps := range i.PodSets {
		pods := ps.Replicas * ps.Count
		members += pods
		for name, q := range ps.SinglePodRequests {
			sum := total[name]
			for range pods {
				sum.Add(q)
			}
			total[name] = sum
		}
	}
	return members, total
}
