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

package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// localAuth is kubeconfig mode's login: a new token, or the one of --token-file (a new one
// there with --new-link). The file holds a secret that signs in as the user, so it must be the
// user's alone: one that another user owns, or that group or others may read, is refused.
func (o *Options) localAuth() (*LocalAuth, error) {
	if o.TokenFile == "" {
		return NewLocalAuth()
	}
	f, err := os.Open(o.TokenFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return o.saveNewToken(os.O_CREATE | os.O_EXCL)
	case err != nil:
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := private(f, o.TokenFile); err != nil {
		return nil, err
	}
	if o.NewLink {
		return o.saveNewToken(os.O_TRUNC)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	auth, err := LocalAuthWithToken(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--token-file %s: %w", o.TokenFile, err)}
	}
	return auth, nil
}

// private refuses a token file that is not the user's alone, naming the fix. It checks the
// opened file, so the file checked is the file read.
func private(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("--token-file: %w", err)
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return &UsageError{Err: fmt.Errorf("--token-file %s is owned by uid %d, not by you (uid %d): the login token must be yours alone; remove it and gantry ui writes a new one, mode 0600",
			path, uid, os.Getuid())}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &UsageError{Err: fmt.Errorf("--token-file %s: its mode is %04o, so other users may read the login token: run chmod 600 %s", path, perm, path)}
	}
	return nil
}

// saveNewToken writes a new token to --token-file, mode 0600.
func (o *Options) saveNewToken(flag int) (*LocalAuth, error) {
	auth, err := NewLocalAuth()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(o.TokenFile, os.O_WRONLY|flag, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	if _, err := io.WriteString(f, auth.Token()+"\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	return auth, nil
}
