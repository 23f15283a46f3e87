#!/usr/bin/env bash
# Java reader benchmark (docs/performance.md "How cost grows", Readers); not a test.
# Builds the reader jar (make java-reader), compiles readers/java/src/bench/java against it and
# runs ReaderBench: the 2,000-pin store and questions of scripts/bench-reader-python.py, timed
# after an untimed JIT warm-up. JAVA_OPTS: extra JVM flags (e.g. a JFR recording).
# Usage: scripts/bench-reader-java.sh [SECONDS-PER-MEASUREMENT]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
share=${JR_SHARE:-/usr/share/java}
out=.build/java
make --no-print-directory java-reader >/dev/null
classpath=$out/pinkeeper-reader.jar:$share/jackson-databind.jar:$share/jackson-core.jar:$share/jackson-annotations.jar
mapfile -t sources < <(find readers/java/src/bench/java -name '*.java')
rm -rf "$out/bench-classes" && mkdir -p "$out/bench-classes"
javac --release 17 -encoding UTF-8 -Xlint:all -Werror -cp "$classpath" -d "$out/bench-classes" "${sources[@]}"
echo "== $(java -version 2>&1 | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086  # JAVA_OPTS is a list of flags
java ${JAVA_OPTS:-} -cp "$out/bench-classes:$classpath" pinkeeper.reader.bench.ReaderBench "${1:-3}"
