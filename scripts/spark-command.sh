#!/usr/bin/env bash
# Builds the command and runs one of its Spark subcommands (compare, bench) in a JVM with the
# opens Spark needs on Java 17, as Spark's own launcher adds them. Usage: spark-command.sh SUBCOMMAND [OPTIONS]
# BENCH_HEAP sets the JVM's heap (default 4g): one JVM runs the driver and the local executors.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && mvn -B -q -pl benchmarks -am install -DskipTests -Dspotless.check.skip=true) >&2
opens=(java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util
  java.util.concurrent java.util.concurrent.atomic jdk.internal.ref sun.nio.ch sun.nio.cs
  sun.security.action sun.util.calendar)
flags=()
for p in "${opens[@]}"; do flags+=("--add-opens=java.base/$p=ALL-UNNAMED"); done
cd "$root"
exec java -Xmx"${BENCH_HEAP:-4g}" "${flags[@]}" -Djdk.reflect.useDirectMethodHandle=false \
  -Dio.netty.tryReflectionSetAccessible=true -Djava.awt.headless=true \
  -cp "$root/benchmarks/target/classes:$root/benchmarks/target/lib/*" dev.writeonce.bench.BenchMain "$@"
