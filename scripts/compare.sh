#!/usr/bin/env bash
# One Spark write through every way of committing it, on a local MinIO: Spark's FileOutputCommitter
# v1 on S3A, Hadoop's S3A magic and directory committers, this project's committers and the rename
# shim; prints one table of the store's own counts and the commit times. Options go to
# `writeonce-bench compare` (module benchmarks).
exec "$(dirname "$0")/spark-command.sh" compare "$@"
