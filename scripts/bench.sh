#!/usr/bin/env bash
# Spark writes at several file counts (100 to 10,000 by default) and a TeraSort-like sort-and-write
# job, through every way of committing them, on a local MinIO (or --store ceph-rgw, or external);
# writes CSV, PNG charts and a report into docs/benchmarks/ (or --out), named after the store when it
# is not MinIO. Options go to `writeonce-bench bench`; a full run on MinIO takes about 25 minutes
# on 2 cores.
exec "$(dirname "$0")/spark-command.sh" bench "$@"
