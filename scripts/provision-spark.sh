#!/usr/bin/env bash
# Provisions a real Spark distribution from PyPI's pyspark source package once and caches it;
# prints the directory that holds it:
#   <dir>/deps       SPARK_HOME: bin/spark-submit, jars/ (Spark with Hadoop's shaded client)
#   <dir>/pyspark    the Python package
#   <dir>/lib        py4j
# Usage: scripts/provision-spark.sh 4.2.0
set -euo pipefail

version="${1:?usage: provision-spark.sh SPARK_VERSION}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/writeonce/spark"
dir="$cache_root/pyspark-$version"

if [ -x "$dir/deps/bin/spark-submit" ]; then
  echo "$dir"
  exit 0
fi

python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || {
  echo "provision-spark: '$python' is not on PATH; install Python 3.10+ with pip" >&2
  exit 2
}

mkdir -p "$cache_root"
exec 9>"$dir.lock"
flock 9
if [ ! -x "$dir/deps/bin/spark-submit" ]; then
  echo "provision-spark: fetching pyspark $version (about 450 MB, first run only)" >&2
  download=$(mktemp -d "$dir.download.XXXXXX")
  trap 'rm -rf "$download"' EXIT
  "$python" -m pip download --quiet --no-deps --no-binary pyspark -d "$download" "pyspark==$version" >&2
  archive=$(ls "$download"/pyspark-"$version".tar.gz)
  unpacked="$download/unpacked"
  mkdir -p "$unpacked"
  tar -xzf "$archive" -C "$unpacked" \
    "pyspark-$version/deps/bin" "pyspark-$version/deps/jars" \
    "pyspark-$version/pyspark" "pyspark-$version/lib"
  rm -rf "$dir"
  mv "$unpacked/pyspark-$version" "$dir"
fi
echo "$dir"
