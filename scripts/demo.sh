#!/usr/bin/env bash
# Builds the command and runs the demo: a local MinIO, pending uploads from several tasks,
# one job commit, and the store's own request counts. Options go to `writeonce-bench demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -pl benchmarks -am install -DskipTests -Dspotless.check.skip=true
exec java -cp "benchmarks/target/classes:benchmarks/target/lib/*" dev.writeonce.bench.BenchMain demo "$@"
