#!/usr/bin/env bash
# The job-commit engine's own cost: a synthetic job of pending uploads (100,000 by default)
# committed against a simulated store that answers at once, in a driver JVM of 256 MB heap.
# Options go to `writeonce-bench bench-engine` (--uploads N, --tasks N, and --stored to leave the
# task manifests in the store for the engine to read as it commits).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && mvn -B -q -pl benchmarks -am install -DskipTests -Dspotless.check.skip=true) >&2
exec java -Xmx256m -XX:+UseSerialGC -cp "$root/benchmarks/target/classes:$root/benchmarks/target/lib/*" \
  dev.writeonce.bench.BenchMain bench-engine "$@"
