#!/usr/bin/env bash
# One Spark write through every way of committing it, on a local MinIO: Spark's FileOutputCommitter
# v1 on S3A, Hadoop's S3A magic and directory committers, this project's committers and the rename
# shim; prints one table of the store's own counts. Options go to `writeonce compare`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && mvn -B -q -pl cli -am install -DskipTests -Dspotless.check.skip=true) >&2
# Spark on Java 17 needs these opens, as Spark's own launcher adds them.
opens=(java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util
  java.util.concurrent java.util.concurrent.atomic jdk.internal.ref sun.nio.ch sun.nio.cs
  sun.security.action sun.util.calendar)
flags=()
for p in "${opens[@]}"; do flags+=("--add-opens=java.base/$p=ALL-UNNAMED"); done
exec java -Xmx2g "${flags[@]}" -Djdk.reflect.useDirectMethodHandle=false \
  -Dio.netty.tryReflectionSetAccessible=true \
  -cp "$root/cli/target/cli-0.1.0-SNAPSHOT.jar:$root/cli/target/lib/*" dev.writeonce.cli.Main compare "$@"
