#!/usr/bin/env bash
# Spark writes at several file counts (100 to 10,000 by default) and a TeraSort-like sort-and-write
# job, through every way of committing them, on a local MinIO; writes CSV, PNG charts and a report
# into docs/benchmarks/ (or --out). Options go to `writeonce-bench bench`; a full run takes about 25
# minutes on 2 cores.
exec "$(dirname "$0")/spark-command.sh" bench "$@"
