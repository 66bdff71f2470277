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

// Package trainjob is the one home of the facts about a TrainJob that more than one part of
// Gantry decides on: who manages it, and whether a queue admitted it at its size. The
// controller, the webhook, the metrics, the command line and the web UI ask it instead of
// reading labels and fields on their own, so they cannot disagree.
package trainjob
