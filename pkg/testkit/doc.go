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

// Package testkit runs Gantry's real controllers and admission webhooks inside a downstream
// project's envtest suite, for teams that build on TrainJobs (job submitters, admission policies,
// Kueue setups) and want their tests to meet the controller their clusters run.
//
// Environment (or Configure, for an environment the suite builds itself) installs, when the
// environment starts, Gantry's CRDs and webhook configurations as this version of Gantry ships
// them, and JobSet's CRDs from the sigs.k8s.io/jobset module the binary is built with. Start then
// runs Gantry's manager in the test process, serving the webhooks with the certificate envtest
// generated, and installs the shipped ClusterTrainingRuntimes:
//
//	env, err := testkit.Environment()
//	cfg, err := env.Start() // kube-apiserver and etcd from KUBEBUILDER_ASSETS
//	gantry, err := testkit.Start(ctx, env, testkit.Options{Runtimes: []string{"torch-distributed"}})
//	defer gantry.Stop()
//
// envtest runs no kubelet, Job controller or JobSet controller, so a JobSet Gantry creates never
// runs. CompleteTrainJob and FailTrainJob write the JobSet status the JobSet controller writes when
// its Jobs end, and Gantry carries it into the TrainJob's Complete or Failed condition, as in a
// cluster; UpdateJobSetStatus writes any other state. WaitForJobSet and WaitForTrainJob wait for
// Gantry's side.
//
// The manifests and the manager are those of the Gantry module version the downstream go.mod
// requires, which is the version of the Helm chart of the same release: test against the version
// you install. The manager runs with the installed defaults, except for what needs a cluster: no
// leader election, no metrics or health endpoints, no certificate rotation, and no training
// progress status server (TrainJob pods carry no status server settings).
package testkit
