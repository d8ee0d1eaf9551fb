#!/usr/bin/env bash
# Installs the Debian packages the tests need beyond npm: Chromium, for the docs page
# test in headless Chromium. Skips what is already there. Run as root or with sudo.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
