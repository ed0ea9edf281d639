#!/usr/bin/env bash
# Builds the pinned MinIO server once and caches it; prints the binary's path.
# The server is built from source through Go's module proxy because no prebuilt download is
# reachable everywhere this project runs. Later calls reuse the cached binary.
set -euo pipefail

MINIO_VERSION="${WRITEONCE_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/writeonce/minio/$MINIO_VERSION"
binary="$cache_root/minio"

if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null 2>&1 || {
  echo "provision-minio: 'go' is not on PATH; install Go 1.24+ or set WRITEONCE_MINIO_BINARY to a MinIO server binary" >&2
  exit 2
}

mkdir -p "$cache_root"
lock="$cache_root.lock"
exec 9>"$lock"
flock 9
if [ ! -x "$binary" ]; then
  echo "provision-minio: building github.com/minio/minio@$MINIO_VERSION (first run only, about 3 minutes)" >&2
  tmp_bin=$(mktemp -d "$cache_root.build.XXXXXX")
  GOBIN="$tmp_bin" GOFLAGS=-mod=mod go install "github.com/minio/minio@$MINIO_VERSION" >&2
  mv "$tmp_bin/minio" "$binary"
  rmdir "$tmp_bin"
fi
echo "$binary"
