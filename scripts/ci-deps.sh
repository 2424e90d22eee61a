#!/usr/bin/env bash
# What the test tiers need from the machine beyond npm packages, installed when missing. Idempotent:
# run it once on a new machine (as root, or with sudo), .ci/run runs it before every CI run.
#   scripts/ci-deps.sh [TIER...]           installs what the tiers need (default: every tier)
#   scripts/ci-deps.sh --check [TIER...]   installs nothing: lists what is missing, exit 1 if anything
# Tiers (docs/development.md, "Tests"): unit integration e2e image browser; bench: the reference tools
# `npm run bench` measures beside (pdftotext, catdoc, antiword, rsync) and `/usr/bin/time -v` for peak RSS. The unit tier needs nothing.
set -euo pipefail

# command:Debian package, per tier
declare -A NEEDS=(
  [unit]=""
  [integration]="git:git pdftotext:poppler-utils"
  [e2e]="git:git"
  [image]="podman:podman crun:crun debootstrap:debootstrap unshare:util-linux"
  [browser]="chromium:chromium"
  [bench]="pdftotext:poppler-utils catdoc:catdoc antiword:antiword rsync:rsync /usr/bin/time:time"
)
ALL=(unit integration e2e image browser bench)

check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
tiers=("$@")
((${#tiers[@]})) || tiers=("${ALL[@]}")

missing=()
declare -A seen=()
for tier in "${tiers[@]}"; do
  if [ -z "${NEEDS[$tier]+set}" ]; then
    echo "ci-deps.sh: no tier \"$tier\" (tiers: ${ALL[*]})" >&2
    exit 2
  fi
  for need in ${NEEDS[$tier]}; do
    package="${need#*:}"
    if ! command -v "${need%%:*}" >/dev/null 2>&1 && [ -z "${seen[$package]+set}" ]; then
      seen[$package]=1
      missing+=("$package")
    fi
  done
done
((${#missing[@]})) || exit 0

if ((check)); then
  echo "missing for the ${tiers[*]} tier(s): ${missing[*]}. Install with: sudo scripts/ci-deps.sh ${tiers[*]}" \
    "(or: apt-get install -y ${missing[*]})"
  exit 1
fi
if ((EUID != 0)); then
  echo "ci-deps.sh: installing ${missing[*]} needs root: sudo $0 ${tiers[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "ci-deps.sh: no apt-get here: install ${missing[*]} with this system's package manager" >&2
  exit 1
fi
echo "ci-deps.sh: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
