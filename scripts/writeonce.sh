#!/usr/bin/env bash
# Runs the operator command (inspect, recover, purge) from a checkout: builds the operator
# distribution when needed and runs its bin/writeonce. On a cluster, unpack
# cli/target/writeonce-cli-VERSION.tar.gz instead and run bin/writeonce (Java 17 only).
# Example: scripts/writeonce.sh inspect s3a://warehouse/sales/ --conf-file /etc/hadoop/conf/core-site.xml
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
find_tarball() { ls "$root"/cli/target/writeonce-cli-*.tar.gz 2>/dev/null | head -1; }
tarball="$(find_tarball)"
if [[ -z "$tarball" ]]; then
  (cd "$root" && mvn -B -q -pl cli -am install -DskipTests -Dspotless.check.skip=true) >&2
  tarball="$(find_tarball)"
fi
home="$root/cli/target/dist"
name="$(basename "$tarball" .tar.gz)"
if [[ ! -x "$home/$name/bin/writeonce" || "$tarball" -nt "$home/$name/bin/writeonce" ]]; then
  rm -rf "$home" && mkdir -p "$home" && tar -xzf "$tarball" -C "$home"
fi
exec "$home/$name/bin/writeonce" "$@"
