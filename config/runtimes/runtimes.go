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

// Package runtimes embeds the shipped ClusterTrainingRuntimes, so the test kit can install them
// from a downstream module's cache, where this directory is all there is of config/.
package runtimes

import "embed"

// Files holds config/runtimes/*.yaml, kustomization.yaml included (IsRuntime tells them apart).
//
//go:embed *.yaml
var Files embed.FS

// IsRuntime reports whether an embedded file is a runtime rather than the kustomization.
func IsRuntime(name string) bool { return name != "kustomization.yaml" }
