#!/usr/bin/env bash
# The store's own limit for a job commit: bare CompleteMultipartUpload requests at several
# parallelisms, then the engine's whole job commit of as many uploads (10,000 by default), on one
# store the tool starts itself (--store minio or ceph-rgw, or external for WRITEONCE_S3_*).
# Options go to `writeonce-bench bench-completions`; writes docs/benchmarks/completions-<store>.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && mvn -B -q -pl benchmarks -am install -DskipTests -Dspotless.check.skip=true) >&2
cd "$root"
exec java -Xmx1g -XX:+UseSerialGC -cp "$root/benchmarks/target/classes:$root/benchmarks/target/lib/*" \
  dev.writeonce.bench.BenchMain bench-completions "$@"
