// Package crd embeds the generated CRDs, so tools such as `gantry render` can default and
// validate objects exactly as the apiserver would, without a cluster.
package crd

import "embed"

// Bases holds config/crd/bases/*.yaml.
//
//go:embed bases/*.yaml
var Bases embed.FS
