#!/usr/bin/env bash
# The whole fault matrix: every fault several times against the real pipeline on a fresh embedded stack, counting
# the suite's three metric sets, every output of every set judged against the oracle's truth of the records sent
# (fault-suite/README.md); the results go to fault-suite/results/run-<UTC start time>.md (--report FILE to choose
# another file). docs/reliability.md quotes the latest complete run by hand.
#
#   fault-suite/run.sh [--rounds 3] [--faults KILL_STREAM,POSTGRES_FROZEN,...] [--events 30000] [--rate 500]
#                      [--work DIR] [--report FILE]
#
# Builds first (unless RECOUNT_NO_BUILD=1). Takes 3 to 7 minutes per round on a 2-core machine (run of 2026-12-08: 60 minutes for 12 rounds).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ "${RECOUNT_NO_BUILD:-0}" != 1 ]; then
  echo "fault-suite: building (mvn -DskipTests package)..." >&2
  mvn -q -B -DskipTests package >"$ROOT/target-fault-suite-build.log" 2>&1 \
    || { tail -n 40 "$ROOT/target-fault-suite-build.log" >&2; exit 1; }
  rm -f "$ROOT/target-fault-suite-build.log"
fi
JAR="$(ls "$ROOT"/fault-suite/target/fault-suite-*.jar | grep -v sources | head -n 1)"
exec java -Xmx1g -Drecount.root="$ROOT" -cp "$JAR:$(cat "$ROOT/fault-suite/target/runtime.classpath")" \
  dev.recount.faults.FaultSuiteMain --command "fault-suite/run.sh $*" "$@"
