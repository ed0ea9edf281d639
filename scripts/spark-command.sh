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
# The commit the figures belong to, for the reports; a tree with changes is marked so.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi
exec java -Xmx"${BENCH_HEAP:-4g}" "${flags[@]}" -Djdk.reflect.useDirectMethodHandle=false \
  -Dwriteonce.commit="$commit" \
  -Dio.netty.tryReflectionSetAccessible=true -Djava.awt.headless=true \
  -cp "$root/benchmarks/target/classes:$root/benchmarks/target/lib/*" dev.writeonce.bench.BenchMain "$@"
