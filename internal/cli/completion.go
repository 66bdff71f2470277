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

package cli

import (
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Completions list on demand (no cache): a name typed a second later must be there.

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// completionReader is what every completion reads with: the namespace and a reader.
func (o *Options) completionReader() (string, *jobview.Reader, error) {
	ns, err := o.Namespace()
	if err != nil {
		return "", nil, err
	}
	r, err := o.Reader()
	return ns, r, err
}

func (o *Options) completeJobs(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, r, err := o.completionReader()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list := &trainer.TrainJobList{}
	if err := r.Client.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, tj := range list.Items {
		if strings.HasPrefix(tj.Name, prefix) {
			names = append(names, tj.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func (o *Options) completeRuntimes(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	ns, r, err := o.completionReader()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	rts, err := r.ListRuntimes(cmd.Context(), ns, true, true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	seen := map[string]bool{}
	var names []string
	for _, rt := range rts {
		if rt.Framework != "" && strings.HasPrefix(rt.Name, prefix) && !seen[rt.Name] {
			seen[rt.Name] = true
			names = append(names, rt.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeSteps lists the steps of the job named by the first argument.
func (o *Options) completeSteps(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, r, err := o.completionReader()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	tj, err := r.TrainJob(cmd.Context(), ns, args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	pods, err := r.Pods(cmd.Context(), tj)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, s := range jobview.Steps(pods) {
		if strings.HasPrefix(s.Name, prefix) {
			names = append(names, s.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func completeStates(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	names := make([]string, len(trainjob.States))
	for i, s := range trainjob.States {
		names[i] = string(s)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// registerConnectionCompletions completes -n from the cluster and --context, --cluster and
// --user from the kubeconfig, as kubectl does.
func registerConnectionCompletions(root *cobra.Command, o *Options) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		r, err := o.Reader()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list := &corev1.NamespaceList{}
		if err := r.Client.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, prefix) {
				names = append(names, ns.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	fromConfig := func(kind string) completeFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			cfg, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			var names []string
			switch kind {
			case "context":
				for n := range cfg.Contexts {
					names = append(names, n)
				}
			case "cluster":
				for n := range cfg.Clusters {
					names = append(names, n)
				}
			case "user":
				for n := range cfg.AuthInfos {
					names = append(names, n)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = root.RegisterFlagCompletionFunc("context", fromConfig("context"))
	_ = root.RegisterFlagCompletionFunc("cluster", fromConfig("cluster"))
	_ = root.RegisterFlagCompletionFunc("user", fromConfig("user"))
}
