#!/usr/bin/env bash
# The compatibility run: the jars a default build installed (Spark 4.2, Hadoop 3.5), tested on the
# previous line (Spark 4.1.2 with the Hadoop 3.4.2 it ships, Hive 4.1.0 on Java 17): each committer,
# the shim, Spark writes, a streaming query (checkpoint file manager and sink protocol) and Hive statements (metastore publish mode too) on MapReduce and Tez, on
# MinIO. Only the suites are built here (-pl, no -am), so the library jars are resolved from the local repository: the same
# binaries as the default run. The Hive-catalog suite of spark-tests (MetastorePublishIT) is left
# out, with Spark's Hive module: the package registry serves it for Spark 4.2 only.
# Usage: mvn -B install -DskipTests && scripts/test-previous-line.sh [MAVEN OPTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
exec mvn -B verify -Pprevious-line -Dwriteonce.previous-line -pl integration-tests,spark-tests,hive-tests \
  -Dit.stores=minio \
  -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='DirectoryCommitterIT,MagicCommitterIT,PartitionedCommitterIT,RenameShimIT,SparkCommitIT,SparkShimIT,SparkStreamingIT#theCheckpoint*+aRunThatLoses*,HiveShimIT,HivePublishIT' \
  -Dfailsafe.failIfNoSpecifiedTests=false "$@"
