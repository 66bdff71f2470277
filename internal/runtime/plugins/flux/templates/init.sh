#!/bin/bash
# Runs in the flux-installer init container, from the Flux view image: copies the Flux install
# into the shared flux-install volume, where the training container picks it up.
set -euo pipefail
mkdir -p /mnt/flux/view /mnt/flux/config/system /mnt/flux/run
cp -a /opt/view/. /mnt/flux/view/
if [ -d /opt/software ]; then
  cp -a /opt/software/. /mnt/flux/software/ 2>/dev/null || true
fi
echo "flux-installer: Flux copied to /mnt/flux/view"
