#!/bin/sh
# divergence launcher, installed as bin/divergence by deploy/bundle.sh.
#
# Runs the real binary (libexec/divergence) with the bundle's own shared
# libraries (lib/) ahead of the system's, so the bundle runs on a host that
# has only the base system and the NVIDIA driver. The server starts its GPU
# worker from /proc/self/exe, which is the real binary, and the worker
# inherits LD_LIBRARY_PATH, so it finds the same libraries.
self=$(readlink -f "$0" 2>/dev/null) || self=$0
prefix=$(dirname "$(dirname "$self")")
LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$prefix/libexec/divergence" "$@"
