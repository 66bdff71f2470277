package runtime

import corev1 "k8s.io/api/core/v1"

// CompletionIndexEnv returns an env var holding the pod's Job completion index, which is its
// node rank: JobSet runs Indexed Jobs.
func CompletionIndexEnv(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
	}}}
}

// ContainerPort is the port every framework's rendezvous (torch master, JAX coordinator, XGBoost
// tracker, torchtune rdzv) listens on.
const ContainerPort int32 = 29500

// SetTrainerCount sets the trainer PodSet's count to the TrainJob's numNodes, when it sets one.
func (i *Info) SetTrainerCount(numNodes *int32) {
	if numNodes == nil {
		return
	}
	if ps := i.PodSetByAncestor(AncestorTrainer); ps != nil {
		ps.Count = *numNodes
	}
}
