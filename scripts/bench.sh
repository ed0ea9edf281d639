#!/usr/bin/env bash
# Spark writes at several file counts (100 to 10,000 by default) and a TeraSort-like sort-and-write
# job, through every way of committing them, on a local MinIO; writes CSV, PNG charts and a report
# into docs/benchmarks/ (or --out). Options go to `writeonce bench`; a full run takes about 30
# minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && mvn -B -q -pl cli -am install -DskipTests -Dspotless.check.skip=true) >&2
# Spark on Java 17 needs these opens, as Spark's own launcher adds them.
opens=(java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util
  java.util.concurrent java.util.concurrent.atomic jdk.internal.ref sun.nio.ch sun.nio.cs
  sun.security.action sun.util.calendar)
flags=()
for p in "${opens[@]}"; do flags+=("--add-opens=java.base/$p=ALL-UNNAMED"); done
cd "$root"
exec java -Xmx4g "${flags[@]}" -Djdk.reflect.useDirectMethodHandle=false \
  -Dio.netty.tryReflectionSetAccessible=true -Djava.awt.headless=true \
  -cp "$root/cli/target/cli-0.1.0-SNAPSHOT.jar:$root/cli/target/lib/*" dev.writeonce.cli.Main bench "$@"
