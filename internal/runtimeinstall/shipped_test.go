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

package runtimeinstall

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/manifest"
)

const (
	shippedRuntimes = "../../config/runtimes"
	chartFile       = "../../charts/gantry/Chart.yaml"
	// kubeflowImages are Kubeflow Trainer's own images: they follow the release Gantry implements.
	kubeflowImages = "ghcr.io/kubeflow/trainer/"
)

// imageTag returns the tag of an image reference, "" when it has none. A digest pins too.
func imageTag(image string) string {
	if _, digest, ok := strings.Cut(image, "@"); ok {
		return "@" + digest
	}
	last := image[strings.LastIndex(image, "/")+1:] // a registry port is before the last slash
	if _, tag, ok := strings.Cut(last, ":"); ok {
		return tag
	}
	return ""
}

func TestImageTag(t *testing.T) {
	cases := map[string]struct {
		image string
		want  string
	}{
		"untagged":                       {image: "ghcr.io/kubeflow/trainer/torchtune-trainer"},
		"tagged":                         {image: "ghcr.io/kubeflow/trainer/torchtune-trainer:v2.3.0", want: "v2.3.0"},
		"Docker Hub short name":          {image: "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", want: "2.13.0-cuda13.0-cudnn9-runtime"},
		"registry port is not a tag":     {image: "registry.local:5000/trainer/mlx-runtime"},
		"registry port and tag":          {image: "registry.local:5000/trainer/mlx-runtime:v1", want: "v1"},
		"a digest pins the image":        {image: "nvcr.io/nvidia/jax@sha256:0123", want: "@sha256:0123"},
		"a single name with no tag":      {image: "busybox"},
		"a single name with a tag":       {image: "busybox:1.37", want: "1.37"},
		"tag and digest: digest wins":    {image: "busybox:1.37@sha256:ab", want: "@sha256:ab"},
		"latest is a tag, if a poor one": {image: "busybox:latest", want: "latest"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, imageTag(tc.image)); diff != "" {
				t.Errorf("imageTag(%q) (-want,+got):\n%s", tc.image, diff)
			}
		})
	}
}

// kubeflowTrainerVersion is the Kubeflow Trainer release the chart publishes to the Python SDK.
func kubeflowTrainerVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(chartFile)
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	v := chart.Annotations["gantry.dev/kubeflow-trainer-version"]
	if v == "" {
		t.Fatalf("%s has no gantry.dev/kubeflow-trainer-version annotation", chartFile)
	}
	return "v" + v
}

// runtimeImages lists the images of every container and init container of a shipped runtime.
func runtimeImages(t *testing.T, path string) []string {
	t.Helper()
	objs, err := manifest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, obj := range objs {
		rt := &trainer.ClusterTrainingRuntime{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, rt); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, rj := range rt.Spec.Template.Spec.ReplicatedJobs {
			pod := rj.Template.Spec.Template.Spec
			for _, c := range append(pod.InitContainers, pod.Containers...) {
				images = append(images, c.Image)
			}
		}
	}
	return images
}

// TestShippedRuntimeImagesArePinned keeps every image of config/runtimes (and so of the chart's
// copies) pinned: an untagged image is whatever the registry calls latest that day, so the same
// runtime would run different code from one node, or one week, to the next.
func TestShippedRuntimeImagesArePinned(t *testing.T) {
	version := kubeflowTrainerVersion(t)
	files, err := filepath.Glob(filepath.Join(shippedRuntimes, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, path := range files {
		if filepath.Base(path) == "kustomization.yaml" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			images := runtimeImages(t, path)
			if len(images) == 0 {
				t.Fatal("no container image found")
			}
			var problems []string
			for _, image := range images {
				tag := imageTag(image)
				switch {
				case tag == "" || tag == "latest":
					problems = append(problems, fmt.Sprintf("%s: not pinned", image))
				case strings.HasPrefix(image, kubeflowImages) && tag != version:
					problems = append(problems, fmt.Sprintf("%s: Kubeflow Trainer's images follow its release %s", image, version))
				}
			}
			if diff := cmp.Diff([]string(nil), problems); diff != "" {
				t.Errorf("images (-want,+got):\n%s", diff)
			}
		})
		checked++
	}
	if checked < 8 {
		t.Errorf("checked %d runtime files in %s, want the 8 shipped ones", checked, shippedRuntimes)
	}
}
