#!/usr/bin/env bash
# What the tests need beyond npm: installed when missing, nothing done when present (idempotent).
# Chromium from Debian: the status page's browser tests (test/browser/) drive it with playwright-core.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "ci-deps: missing ${need[*]}; run as root: apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi
