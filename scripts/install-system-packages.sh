#!/usr/bin/env bash
# Installs the Debian packages the tests need beyond npm: Chromium, for the tests in
# headless Chromium (the docs page, the CLI's charts and conformance report), tmux, and
# PostgreSQL, whose server the scale-out tests start as throwaway clusters on loopback
# ports (harness/postgres-cluster.ts finds its binaries in /usr/lib/postgresql/<version>/bin),
# and curl, which the README's walkthroughs use (test/readme/walkthroughs.test.ts runs them).
# Skips what is already there. Run as root or with sudo.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v tmux >/dev/null || missing+=(tmux)
command -v curl >/dev/null || missing+=(curl)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
if [ "${#missing[@]}" = 0 ]; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
/usr/bin/chromium --version
tmux -V
ls -d /usr/lib/postgresql/*/bin/initdb
