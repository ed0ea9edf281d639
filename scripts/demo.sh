#!/usr/bin/env bash
# Builds the command and runs the demo: a local MinIO, pending uploads from several tasks,
# one job commit, and the store's own request counts. Options go to `writeonce demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl cli -am install -DskipTests -Dspotless.check.skip=true
exec java -cp "cli/target/cli-0.1.0-SNAPSHOT.jar:cli/target/lib/*" dev.writeonce.cli.Main demo "$@"
