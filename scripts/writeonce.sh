#!/usr/bin/env bash
# Runs the operator command (inspect, recover, purge), building it first when needed.
# Example: scripts/writeonce.sh inspect s3a://warehouse/sales/ --conf-file /etc/hadoop/conf/core-site.xml
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/cli/target/cli-0.1.0-SNAPSHOT.jar"
if [[ ! -f "$jar" || ! -d "$root/cli/target/lib" ]]; then
  (cd "$root" && mvn -B -q -pl cli -am install -DskipTests -Dspotless.check.skip=true) >&2
fi
exec java -cp "$jar:$root/cli/target/lib/*" dev.writeonce.cli.Main "$@"
