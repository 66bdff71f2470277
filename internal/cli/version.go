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
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/version"
)

// publicConfigMap is where an installation publishes the Kubeflow Trainer API version it
// serves; the Kubeflow Python SDK reads it too.
const (
	publicConfigMap  = "kubeflow-trainer-public"
	publicVersionKey = "kubeflow_trainer_version"
)

func newVersionCommand(o *Options) *cobra.Command {
	var clientOnly bool
	var ns string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version and the Kubeflow Trainer version the cluster serves",
		Long: `Print gantry's version and, unless --client, the Kubeflow Trainer API version the
installation publishes in ConfigMap kubeflow-trainer-public (namespace --trainer-namespace).
Exit code 6 when the API server cannot be reached, 4 when nothing is published.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintf(o.Streams.Out, "Client Version: %s\n", version.String()); err != nil || clientOnly {
				return err
			}
			v, err := o.serverVersion(cmd.Context(), ns)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(o.Streams.Out, "Server Version: %s (Kubeflow Trainer API, ConfigMap %s/%s)\n", v, ns, publicConfigMap)
			return err
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print the client version only; do not contact the cluster.")
	cmd.Flags().StringVar(&ns, "trainer-namespace", "kubeflow-system", "The namespace Gantry is installed in.")
	return cmd
}

func (o *Options) serverVersion(ctx context.Context, ns string) (string, error) {
	r, err := o.Reader()
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: publicConfigMap}, cm); err != nil {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", ns, publicConfigMap, err)
	}
	v, ok := cm.Data[publicVersionKey]
	if !ok {
		return "", withCode(ExitNotFound, fmt.Errorf("ConfigMap %s/%s has no %s", ns, publicConfigMap, publicVersionKey))
	}
	return v, nil
}
