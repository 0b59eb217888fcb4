#!/usr/bin/env bash
# build.sh BUILD_DIR [TAG] -- the container image, from Debian packages and
# the project's .deb only: no base image is pulled from anywhere.
#
#   1. deploy/deb.sh makes the .deb from BUILD_DIR;
#   2. mmdebstrap assembles a minimal Debian bookworm root filesystem
#      (variant apt) from the Debian mirror, installs the .deb into it with
#      apt (which brings libmicrohttpd12, libjansson4 and zlib1g), adds nginx-light
#      for the front, and drops apt's lists and the docs;
#   3. buildah makes an OCI image from that tarball alone (FROM scratch):
#      entrypoint the launcher, user 65532, port 8080, and the variables the
#      NVIDIA container toolkit reads to mount the driver into the container.
# Writes dist/divergence-image-<version>.oci.tar (an OCI archive: `podman
# load`, `skopeo copy oci-archive:... docker://REGISTRY/divergence:TAG`).
# Needs root (or a user namespace), mmdebstrap, buildah; network access to
# the Debian mirror (MIRROR, default deb.debian.org).
set -euo pipefail
die() { echo "image: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
[ $# -ge 1 ] || die "usage: build.sh BUILD_DIR [TAG]"
build=$(cd "$1" && pwd)
mirror=${MIRROR:-http://deb.debian.org/debian}
for t in mmdebstrap buildah; do command -v $t >/dev/null || die "$t not found (Debian package $t)"; done
out=$root/dist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$root/deploy/deb.sh" "$build" "$work"
deb=$(ls "$work"/divergence_*.deb)
version=$(dpkg-deb -f "$deb" Version)
tag=${2:-divergence:$version}

mmdebstrap --quiet --variant=apt --include=ca-certificates,nginx-light \
  --customize-hook="copy-in $deb /tmp" \
  --customize-hook="chroot \"\$1\" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/$(basename "$deb") && rm -f /tmp/*.deb'" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/*.bin' \
  --customize-hook='chroot "$1" /opt/divergence/bin/divergence version' \
  bookworm "$work/rootfs.tar" "$mirror"
echo "image: root filesystem $(du -m "$work/rootfs.tar" | cut -f1) MiB"

export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs} BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
ctr=$(buildah from scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
buildah add "$ctr" "$work/rootfs.tar" / >/dev/null
buildah config \
  --entrypoint '["/opt/divergence/bin/divergence"]' --cmd 'serve --bind 0.0.0.0 --port 8080' \
  --user 65532:65532 --port 8080/tcp --workingdir / \
  --env CUDA_CACHE_PATH=/tmp/nv --env NVIDIA_VISIBLE_DEVICES=all --env NVIDIA_DRIVER_CAPABILITIES=compute,utility \
  --label org.opencontainers.image.title=divergence --label org.opencontainers.image.version="$version" \
  "$ctr"
buildah commit --quiet "$ctr" "$tag" >/dev/null
mkdir -p "$out"
buildah push --quiet "$tag" "oci-archive:$out/divergence-image-$version.oci.tar:$tag"
echo "image: $tag -> $out/divergence-image-$version.oci.tar ($(du -m "$out/divergence-image-$version.oci.tar" | cut -f1) MiB)"
