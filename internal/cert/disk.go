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

package cert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// DiskSync copies the certificate Secret into the certificate directory. In a pod the kubelet
// does this through a Secret volume, and the read-only mount makes DiskSync step aside; a manager
// run outside a pod (go run, a local cluster) needs it to ever become ready.
type DiskSync struct {
	Reader client.Reader
	Secret types.NamespacedName
	Dir    string
	Period time.Duration
}

var _ manager.LeaderElectionRunnable = (*DiskSync)(nil)

// NeedLeaderElection is false: every replica serves webhooks.
func (*DiskSync) NeedLeaderElection() bool { return false }

// Start syncs until ctx ends.
func (d *DiskSync) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("cert-disk-sync")
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := d.sync(ctx); err != nil {
			log.V(2).Info("Not syncing certificates to disk", "reason", err.Error())
		}
	}, d.Period)
	return nil
}

func (d *DiskSync) sync(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := d.Reader.Get(ctx, d.Secret, secret); err != nil {
		return err
	}
	for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
		data := secret.Data[key]
		if len(data) == 0 {
			return fmt.Errorf("secret has no %s yet", key)
		}
		path := filepath.Join(d.Dir, key)
		if current, err := os.ReadFile(path); err == nil && bytes.Equal(current, data) {
			continue
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(d.Dir, 0o700); err != nil {
			return err
		}
		// Write then rename, so no reader sees half a file. The pair is still replaced one file
		// at a time; Pair waits for the files to agree.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}
