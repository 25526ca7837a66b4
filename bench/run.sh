#!/usr/bin/env bash
# recount side-by-side benchmarks. Not a test. Prints a table and writes it to bench/results/<run>.md (never to
# docs/: docs/benchmarks.md cites these files by hand).
#
#   bench/run.sh [--events N] [--batch-events N] [--only stream,kstreams,profile,improve,batch,levers,compact,reconcile,memory,freshness]
#                [--rate R] [--fresh-seconds S] [--home DIR] [--baseline-rev REV] [--improve-rounds N]
#                [--cluster-rounds N] [--pg-preload N] [--pg-rows N] [--reconcile-channels N]
#                [--batch-rounds N] [--lever-rounds N]   (levers and compact run only when named in --only)
#                [--stream-rounds N] [--memory-xmx SIZE] [--checkpoint-interval D] [--fresh-modes window-close,interval]
#                [--kstreams-grace D]   (k's grace, default 3h: a replay needs the topic's span; see KafkaStreamsBench)
#                [--sets-rounds N] [--sets-configs prev,1,1a,3,10] [--sets-baseline-rev REV] [--sets-profile CONFIGS]
#   sections not in the default --only: sets (throughput and checkpointed state with 1, 3 and 10 metric sets on one
#   topic, against the job before metric sets), cluster (the job on the local standalone Flink cluster vs the
#   embedded MiniCluster: needs `./recount up --cluster --home DIR`), postgres (the stream's UPSERT rows/s per
#   connection, the batch's replace of a day)
#   stream runs (c) (c2) (b) (b2) (k) (a); kstreams alone runs only (k), the Kafka Streams peer, on a fresh topic
#
# Needs: the modules built (./recount build), a running local stack (`./recount up --home DIR`; its local.env is
# read from DIR, default .recount). Every engine runs in its own JVM, one after the other, on the same data.
set -euo pipefail
# What was asked, as the run's file shows it (before the options are parsed away).
INVOCATION="${BENCH_OUT:+BENCH_OUT=$BENCH_OUT }bench/run.sh $*"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
V=0.1.0-SNAPSHOT
EVENTS=5000000; BATCH_EVENTS=20000000; ONLY="stream,profile,improve,batch,reconcile,memory,freshness"; RATE=20000
BATCH_ROUNDS=3; LEVER_ROUNDS=3
HOME_DIR="$ROOT/.recount"; PAR=2; FRESH_SECONDS=240
BASELINE_REV=b924c0e; IMPROVE_ROUNDS=2
CLUSTER_ROUNDS=2; PG_PRELOAD=10000000; PG_ROWS=200000; RECONCILE_CHANNELS=7
STREAM_ROUNDS=1; MEMORY_XMX=512m; CHECKPOINT_INTERVAL=""; FRESH_MODES=window-close; KSTREAMS_GRACE=3h
SETS_ROUNDS=2; SETS_CONFIGS="prev,1,1a,3,10"; SETS_BASELINE_REV=8aaacc3; SETS_PROFILE=
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2;; --batch-events) BATCH_EVENTS="$2"; shift 2;;
    --only) ONLY="$2"; shift 2;; --batch-rounds) BATCH_ROUNDS="$2"; shift 2;; --lever-rounds) LEVER_ROUNDS="$2"; shift 2;; --rate) RATE="$2"; shift 2;; --fresh-seconds) FRESH_SECONDS="$2"; shift 2;; --home) HOME_DIR="$2"; shift 2;;
    --baseline-rev) BASELINE_REV="$2"; shift 2;; --improve-rounds) IMPROVE_ROUNDS="$2"; shift 2;;
    --cluster-rounds) CLUSTER_ROUNDS="$2"; shift 2;; --pg-preload) PG_PRELOAD="$2"; shift 2;; --pg-rows) PG_ROWS="$2"; shift 2;;
    --reconcile-channels) RECONCILE_CHANNELS="$2"; shift 2;;
    --stream-rounds) STREAM_ROUNDS="$2"; shift 2;; --memory-xmx) MEMORY_XMX="$2"; shift 2;;
    --checkpoint-interval) CHECKPOINT_INTERVAL="$2"; shift 2;; --fresh-modes) FRESH_MODES="$2"; shift 2;;
    --kstreams-grace) KSTREAMS_GRACE="$2"; shift 2;;
    --sets-rounds) SETS_ROUNDS="$2"; shift 2;; --sets-configs) SETS_CONFIGS="$2"; shift 2;;
    --sets-baseline-rev) SETS_BASELINE_REV="$2"; shift 2;; --sets-profile) SETS_PROFILE="$2"; shift 2;;
    -h|--help) sed -n 2,19p "$0"; exit 0;;
    *) echo "bench: unknown option $1" >&2; exit 2;;
  esac
done
wants() { [[ ",$ONLY," == *",$1,"* ]]; }
[ -f "$HOME_DIR/local.env" ] || { echo "bench: no $HOME_DIR/local.env: start the stack with ./recount up --home $HOME_DIR" >&2; exit 1; }
# shellcheck disable=SC1091
. "$HOME_DIR/local.env"
export KAFKA_BOOTSTRAP_SERVERS RECOUNT_JDBC_URL PGUSER PGPASSWORD RECOUNT_PGPASSWORD_DIR

# BENCH_OUT=<an earlier run dir> adds to that run's results (e.g. to run the sections in several goes).
OUT="${BENCH_OUT:-$ROOT/bench/target/run-$(date -u +%Y%m%dT%H%M%S)}"; mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"; touch "$RESULTS"
# Every invocation that adds to this run, with the commit it ran on: the run's file lists them all.
printf '%s\t%s\n' "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" "$INVOCATION" >>"$OUT/commands.tsv"
# A property of the root pom, kept on one line there.
pom_property() { sed -n "s:.*<$1>\\(.*\\)</$1>.*:\\1:p" "$ROOT/pom.xml"; }
OPENS=$(pom_property java17.opens)

echo "bench: building the bench module (profile bench)..." >&2
# -am: core and db come from this checkout's reactor, not from ~/.m2 (nothing is installed there).
(cd "$ROOT" && mvn -q -o -Pbench -pl bench -am package -DskipTests) >"$OUT/build.log" 2>&1 \
  || (cd "$ROOT" && mvn -q -Pbench -pl bench -am package -DskipTests) >"$OUT/build.log" 2>&1 \
  || { echo "bench: building the bench module failed; see $OUT/build.log" >&2; tail -n 20 "$OUT/build.log" >&2; exit 1; }
BENCH_CP="$ROOT/bench/target/bench-$V.jar:$(cat "$ROOT/bench/target/runtime.classpath")"
# Snapshot the other modules' jars: their owners may rebuild them while this runs.
SNAP="$OUT/jars"; mkdir -p "$SNAP"
for m in streaming-job batch-backfill db; do cp "$ROOT/$m/target/$m-$V.jar" "$SNAP/"; done
STREAM_CP="$SNAP/streaming-job-$V.jar:$(cat "$ROOT/streaming-job/target/runtime.classpath")"
BATCH_CP="$SNAP/batch-backfill-$V.jar:$(cat "$ROOT/batch-backfill/target/runtime.classpath")"
DB_CP="$SNAP/db-$V.jar:$(cat "$ROOT/db/target/runtime.classpath")"

record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" | tee -a "$RESULTS" >&2; }   # name value unit note
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }
run_id=$(date +%s | tail -c 6)

# fresh_schema NAME [DEFINITIONS]: a new schema, migrated, with the objects of the definitions file's metric sets.
fresh_schema() { java -cp "$DB_CP:$BENCH_CP" dev.recount.bench.Admin schema "$@" >>"$OUT/admin.log" 2>&1; }
new_topics() { java -cp "$BENCH_CP" dev.recount.bench.Admin topics 3 "$@" >>"$OUT/admin.log" 2>&1; }
stream_config() {  # file topic schema dir
  cat > "$1" <<CFG
topics.input=$2
topics.dead-letter=$2-dlq
topics.backfill=$2-late
postgres.schema=$3
stream.parallelism=$PAR
stream.checkpoint-dir=$4/checkpoints
lake.path=$4/lake
stream.web-ui-port=0
${CHECKPOINT_INTERVAL:+stream.checkpoint-interval=$CHECKPOINT_INTERVAL}
CFG
}

# cpu_of BASE CMD...: runs CMD (its redirections as given) and writes its CPU seconds, user + system of all its threads,
# to BASE.cpu. On 2 cores the job is CPU-bound: what it costs per record, beside the ceiling's, is its CPU time.
cpu_of() {
  local base="$1"; shift
  local TIMEFORMAT='%U %S' LC_NUMERIC=C # seconds with a decimal point, whatever the caller's locale
  { time "$@" 2>&3; } 3>&2 2>"$base.times" # the command's own stderr goes where the caller sent it
  awk '{printf "%.2f\n", $1 + $2}' "$base.times" >"$base.cpu"
}

# One bounded run of the streaming job on $TOPIC into a fresh schema: name classpath [java options...].
# Writes $OUT/<name>.properties, $OUT/<name>.log and $OUT/<name>.cpu; the run's state and lake go under $OUT/<name>.
bounded_stream_run() {
  local name="$1" cp="$2"; shift 2
  fresh_schema "bench_$name"; stream_config "$OUT/$name.properties" "$TOPIC" "bench_$name" "$OUT/$name"
  cpu_of "$OUT/$name" java -Xmx2g "$@" -cp "$cp" dev.recount.stream.StreamJobMain stream --bounded --from-earliest \
    --config "$OUT/$name.properties" >"$OUT/$name.log" 2>&1
}

# baseline_job_cp REV DIR: the streaming job of git revision REV, built in DIR once (`git archive`, then the module with
# the modules it needs, offline); prints its classpath.
baseline_job_cp() {
  local rev="$1" dir="$2"
  if [ ! -f "$dir/streaming-job/target/streaming-job-$V.jar" ]; then
    echo "bench: building the streaming job at $rev..." >&2
    rm -rf "$dir"; mkdir -p "$dir"
    (cd "$ROOT" && git archive "$rev") | tar -x -C "$dir"
    (cd "$dir" && mvn -q -o -pl streaming-job -am package -DskipTests) >"$dir.build.log" 2>&1 \
      || { echo "bench: building the streaming job at $rev failed; see $dir.build.log" >&2; exit 1; }
  fi
  echo "$dir/streaming-job/target/streaming-job-$V.jar:$(cat "$dir/streaming-job/target/runtime.classpath")"
}

# ---------------------------------------------------------------- 1. stream throughput (a) (b) (c) (k)
# (k) the Kafka Streams peer on $TOPIC into a fresh schema; sets K_S (process wall seconds). Arg: round suffix.
kstreams_run() {
  local sfx="$1"
  echo "bench: round ${round:-1}: (k) Kafka Streams, de-duplicated, exactly_once_v2..." >&2
  t0=$(now); java -Xmx2g -cp "$BENCH_CP" dev.recount.bench.KafkaStreamsBench "$TOPIC" "bench_k_$run_id$sfx" "$PAR" 10s "$KSTREAMS_GRACE" >"$OUT/k$sfx.log" 2>&1
  K_S=$(secs "$t0" "$(now)"); record "k_kafka_streams_s$sfx" "$K_S" s "process wall; in-job: $(awk '/^RESULT/{print $4}' "$OUT/k$sfx.log") s; $(grep -a '^kafka-streams:' "$OUT/k$sfx.log")"
}
if wants stream || wants kstreams || wants profile || wants improve || wants cluster; then
  TOPIC="bench-$run_id"
  new_topics "$TOPIC" "$TOPIC-dlq" "$TOPIC-late"
  echo "bench: preloading $EVENTS events into $TOPIC (./recount generate)..." >&2
  t0=$(now)
  RECOUNT_NO_BUILD=1 RECOUNT_NO_LOCAL_ENV=1 "$ROOT/recount" generate --events "$EVENTS" --span 2h --start 2026-11-29T00:00:00Z --rate 0 \
    --topic "$TOPIC" --truth-dir "$OUT/truth" >"$OUT/generate.log" 2>&1
  RECORDS=$(java -cp "$BENCH_CP" dev.recount.bench.Topics "$TOPIC" 2>/dev/null | tail -1)
  record preload_s "$(secs "$t0" "$(now)")" s "$RECORDS records (valid+duplicates+invalid+too-late) in $TOPIC, 3 partitions"
fi
if wants stream; then
  # Every engine once per round, rounds alternate (STREAM_ROUNDS, default 1), each into a fresh schema.
  for round in $(seq 1 "$STREAM_ROUNDS"); do
    sfx=""; [ "$STREAM_ROUNDS" -gt 1 ] && sfx="_$round"
    echo "bench: round $round: (c) ingest ceiling, Jackson tree..." >&2
    t0=$(now); cpu_of "$OUT/c$sfx" java -Xmx2g -cp "$BENCH_CP" dev.recount.bench.IngestCeilingBench "$TOPIC" "$PAR" tree >"$OUT/c$sfx.log" 2>&1
    C_S=$(secs "$t0" "$(now)"); record "c_ingest_ceiling_s$sfx" "$C_S" s "process wall; CPU $(cat "$OUT/c$sfx.cpu") s; in-job: $(awk '/^RESULT/{print $4}' "$OUT/c$sfx.log") s"

    echo "bench: round $round: (c2) ingest ceiling, core's validator..." >&2
    t0=$(now); cpu_of "$OUT/c2$sfx" java -Xmx2g -cp "$BENCH_CP" dev.recount.bench.IngestCeilingBench "$TOPIC" "$PAR" validator >"$OUT/c2$sfx.log" 2>&1
    C2_S=$(secs "$t0" "$(now)"); record "c2_ingest_ceiling_validator_s$sfx" "$C2_S" s "process wall; CPU $(cat "$OUT/c2$sfx.cpu") s; in-job: $(awk '/^RESULT/{print $4}' "$OUT/c2$sfx.log") s"

    echo "bench: round $round: (b) Flink SQL, plain..." >&2
    t0=$(now); java -Xmx2g -cp "$BENCH_CP" dev.recount.bench.FlinkSqlBench "$TOPIC" "bench_b_$run_id" "$PAR" 10s 30 plain >"$OUT/b$sfx.log" 2>&1
    B_S=$(secs "$t0" "$(now)"); record "b_flink_sql_s$sfx" "$B_S" s "process wall; in-job: $(awk '/^RESULT/{print $4}' "$OUT/b$sfx.log") s; $(grep -a '^flink-sql:' "$OUT/b$sfx.log")"

    echo "bench: round $round: (b2) Flink SQL, de-duplicated and tuned..." >&2
    t0=$(now); java -Xmx2g -cp "$BENCH_CP" dev.recount.bench.FlinkSqlBench "$TOPIC" "bench_b2_$run_id" "$PAR" 10s 30 dedup >"$OUT/b2$sfx.log" 2>&1
    B2_S=$(secs "$t0" "$(now)"); record "b2_flink_sql_dedup_s$sfx" "$B2_S" s "process wall; in-job: $(awk '/^RESULT/{print $4}' "$OUT/b2$sfx.log") s; $(grep -a '^flink-sql-dedup:' "$OUT/b2$sfx.log")"

    kstreams_run "$sfx"

    echo "bench: round $round: (a) recount streaming job as built..." >&2
    t0=$(now); bounded_stream_run "a_${run_id}$sfx" "$STREAM_CP"
    A_S=$(secs "$t0" "$(now)")
    A_ROWS=$(java -cp "$BENCH_CP" dev.recount.bench.Admin count "bench_a_${run_id}$sfx.stream_window_metrics" 2>/dev/null | tail -1)
    record "a_recount_stream_s$sfx" "$A_S" s "process wall; CPU $(cat "$OUT/a_${run_id}$sfx.cpu") s; stream_window_metrics rows/events: $A_ROWS; $(grep -o 'duplicates dropped [0-9,]*; too late [0-9,]*' "$OUT/a_${run_id}$sfx.log")"
    for x in a:$A_S b:$B_S b2:$B2_S c:$C_S c2:$C2_S k:$K_S; do
      record "${x%%:*}_events_per_s$sfx" "$(awk -v n="$RECORDS" -v s="${x#*:}" 'BEGIN{printf "%.0f", n/s}')" events/s "$RECORDS records / process wall"
    done
    record "ratio_a_over_b2$sfx" "$(awk -v a="$A_S" -v b="$B2_S" 'BEGIN{printf "%.2f", b/a}')" x "throughput a / throughput b2 (the de-duplicating SQL peer)"
    record "ratio_a_over_k$sfx" "$(awk -v a="$A_S" -v k="$K_S" 'BEGIN{printf "%.2f", k/a}')" x "throughput a / throughput k (the Kafka Streams peer)"
    record "ratio_a_over_b$sfx" "$(awk -v a="$A_S" -v b="$B_S" 'BEGIN{printf "%.2f", b/a}')" x "throughput a / throughput b (plain SQL)"
    record "ratio_a_over_c$sfx" "$(awk -v a="$A_S" -v c="$C_S" -v c2="$C2_S" 'BEGIN{m=(c<c2)?c:c2; printf "%.2f", m/a}')" x "throughput a / the faster ingest ceiling (c or c2)"
  done
fi

if wants kstreams && ! wants stream; then
  for round in $(seq 1 "$STREAM_ROUNDS"); do
    sfx=""; [ "$STREAM_ROUNDS" -gt 1 ] && sfx="_$round"
    kstreams_run "$sfx"
    record "k_events_per_s$sfx" "$(awk -v n="$RECORDS" -v s="$K_S" 'BEGIN{printf "%.0f", n/s}')" events/s "$RECORDS records / process wall"
  done
fi

# ---------------------------------------------------------------- 1b. what process boundaries cost
# (a) on the embedded MiniCluster (one JVM) and on the local standalone cluster (`stream --cluster`: the shaded
# -flink.jar submitted by Flink's client to a JobManager and two TaskManagers, each its own JVM, so records between
# the keyed stages cross JVMs over Flink's network stack), alternately, same topic, same settings, fresh schemas.
if wants cluster; then
  [ -n "${RECOUNT_FLINK_CONF_DIR:-}" ] || { echo "bench: cluster needs the local clusters: ./recount up --cluster --home $HOME_DIR" >&2; exit 1; }
  for round in $(seq 1 "$CLUSTER_ROUNDS"); do
    name="cm_${round}_$run_id"
    echo "bench: cluster round $round, embedded MiniCluster..." >&2
    t0=$(now); bounded_stream_run "$name" "$STREAM_CP"
    S=$(secs "$t0" "$(now)")
    record "mini_cluster_${round}_s" "$S" s "$(awk -v n="$RECORDS" -v s="$S" 'BEGIN{printf "%.0f", n/s}') events/s; $(java -cp "$BENCH_CP" dev.recount.bench.Admin count "bench_$name.stream_window_metrics" 2>/dev/null | tail -1)"
    name="cs_${round}_$run_id"
    echo "bench: cluster round $round, standalone cluster (stream --cluster)..." >&2
    fresh_schema "bench_$name"; stream_config "$OUT/$name.properties" "$TOPIC" "bench_$name" "$OUT/$name"
    t0=$(now)
    env -u PGPASSWORD RECOUNT_NO_BUILD=1 RECOUNT_NO_LOCAL_ENV=1 "$ROOT/recount" stream --cluster --bounded --from-earliest \
      --config "$OUT/$name.properties" >"$OUT/$name.log" 2>&1
    S=$(secs "$t0" "$(now)")
    record "standalone_cluster_${round}_s" "$S" s "$(awk -v n="$RECORDS" -v s="$S" 'BEGIN{printf "%.0f", n/s}') events/s; $(java -cp "$BENCH_CP" dev.recount.bench.Admin count "bench_$name.stream_window_metrics" 2>/dev/null | tail -1)"
  done
fi

# ---------------------------------------------------------------- 7. PostgreSQL: the stream's UPSERT rows/s, the batch's replace of a day
if wants postgres; then
  echo "bench: PostgreSQL upserts into a table of $PG_PRELOAD rows (UpsertBench)..." >&2
  fresh_schema "bench_pg_$run_id"
  java -Xmx2g -cp "$DB_CP:$BENCH_CP" dev.recount.bench.UpsertBench "bench_pg_$run_id" "$PG_PRELOAD" "$PG_ROWS" 5000 >"$OUT/postgres.log" 2>&1
  while read -r _ _ phase conns rate _; do
    record "upsert_${phase}_${conns}conn_rows_per_s" "$rate" rows/s "StreamWindowMetricsTable.UPSERT, $PG_ROWS rows, 5,000 per transaction, table of $PG_PRELOAD rows; $(grep '^table' "$OUT/postgres.log")"
  done < <(grep '^RESULT upsert' "$OUT/postgres.log")
  echo "bench: the batch's replace of a day, 987,840 staged keys (BatchReplaceBench)..." >&2
  fresh_schema "bench_replace_$run_id"
  java -Xmx1g -cp "$DB_CP:$BENCH_CP" dev.recount.bench.BatchReplaceBench "bench_replace_$run_id" >"$OUT/replace.log" 2>&1
  while read -r _ _ round secs staged changed deleted logged; do
    record "batch_replace_${round}_s" "$secs" s "replaceFromStaging of $staged staged keys: $changed inserted or changed, $deleted deleted, $logged windows logged"
  done < <(grep '^RESULT replace' "$OUT/replace.log")
fi

# jfr_summary JFR SAMPLES PREFIX: a recording's samples (64 frames deep: the default 5 cannot tell operators apart) into
# SAMPLES, then the top frames by self time (PREFIX-top-self.txt), the recount frame nearest the top of each sample
# (who is busy, PREFIX-top-recount.txt) and the samples per thread (PREFIX-threads.txt).
jfr_summary() {
  local jfr="$1" samples="$2" prefix="$3"
  jfr print --stack-depth 64 --events jdk.ExecutionSample "$jfr" > "$samples"
  awk '/stackTrace = \[/{getline; sub(/^[ \t]+/,""); sub(/line:.*/,""); top[$0]++; n++} END{for(f in top) printf "%6.2f%%  %s\n", 100*top[f]/n, f}' \
    "$samples" | sort -rn | head -25 > "$prefix-top-self.txt"
  awk '/stackTrace = \[/{inst=1; got=0; next} inst && /dev\.recount\./ && !got {sub(/^[ \t]+/,""); sub(/line:.*/,""); own[$0]++; got=1} /^\]/{inst=0} /^jdk.ExecutionSample/{n++} END{for(f in own) printf "%6.2f%%  %s\n", 100*own[f]/n, f}' \
    "$samples" | sort -rn | head -20 > "$prefix-top-recount.txt"
  awk '/sampledThread = /{t=$0; sub(/.*sampledThread = "/,"",t); sub(/".*/,"",t); gsub(/[0-9]+/,"N",t); th[t]++; n++} END{for(x in th) printf "%6.2f%%  %s\n", 100*th[x]/n, x}' \
    "$samples" | sort -rn | head -15 > "$prefix-threads.txt"
}

# ---------------------------------------------------------------- 6. profile (a) with JFR
if wants profile; then
  echo "bench: profiling (a) with JFR..." >&2
  t0=$(now); bounded_stream_run "p_$run_id" "$STREAM_CP" -XX:StartFlightRecording=filename="$OUT/a.jfr",settings=profile
  record a_with_jfr_s "$(secs "$t0" "$(now)")" s "JFR profile settings on"
  jfr_summary "$OUT/a.jfr" "$OUT/samples.txt" "$OUT/profile"
fi

# ---------------------------------------------------------------- 6b. the profiled improvement, before/after
# "before" is the streaming job built from git revision $BASELINE_REV (the last commit before the id-bucketed
# de-dup), "after" is the snapshot of the current build. They run alternately, $IMPROVE_ROUNDS times each, on the
# same preloaded topic, each into a fresh schema.
if wants improve; then
  BASE_CP=$(baseline_job_cp "$BASELINE_REV" "$OUT/baseline-src")
  for round in $(seq 1 "$IMPROVE_ROUNDS"); do
    for variant in before after; do
      cp_run="$STREAM_CP"; [ "$variant" = before ] && cp_run="$BASE_CP"
      name="i_${variant}_${round}_$run_id"
      echo "bench: improve round $round, $variant..." >&2
      t0=$(now); bounded_stream_run "$name" "$cp_run"
      S=$(secs "$t0" "$(now)")
      ROWS=$(java -cp "$BENCH_CP" dev.recount.bench.Admin count "bench_$name.stream_window_metrics" 2>/dev/null | tail -1)
      record "improve_${variant}_${round}_s" "$S" s "$(awk -v n="$RECORDS" -v s="$S" 'BEGIN{printf "%.0f", n/s}') events/s; CPU $(cat "$OUT/$name.cpu") s; rows/events: $ROWS; $(grep -o 'duplicates dropped [0-9,]*' "$OUT/$name.log")"
    done
  done
fi

# ---------------------------------------------------------------- 6c. metric sets: 1, 3 and 10 sets on the same topic
# One topic of events with the generator's attributes (slot_id, country, device, values drawn from the demo's
# definitions), then the streaming job bounded over it, each configuration in its own JVM into a fresh schema migrated
# for its sets, alternating (odd rounds in the order given, even rounds reversed: both ends see the same drift):
#   prev  the job before metric sets ($SETS_BASELINE_REV), the built-in definitions' tables (the default set's)
#   1     the default set alone, as an existing deployment runs it (the built-in definitions, no attribute declared)
#   1a    the default set alone with the demo's attributes declared (bench/metric-sets/one-with-attributes.yaml)
#   3     the demo's three sets (config/demo/metric-sets.yaml)
#   10    the default set and nine others (bench/metric-sets/ten.yaml)
# Per run: events/s (Kafka records / process wall), CPU seconds, and its throughput over the 1-set run's of the same
# round; after the rounds, the median ratio per configuration. From each run's largest retained checkpoint (hard-linked
# while the job runs, so Flink's own cleanup does not take it): the state per operator and, per set, its live window
# keys (window start + dimension values) and the checkpoint's bytes per window key (SetStateSizes). --sets-profile CONFIGS runs those
# configurations once more with JFR (the profile section's summaries, per configuration).
sets_definitions() {  # configuration -> its definitions file; none for the built-in ones
  case "$1" in
    prev|1) echo "";;
    1a) echo "$ROOT/bench/metric-sets/one-with-attributes.yaml";;
    3) echo "$ROOT/config/demo/metric-sets.yaml";;
    10) echo "$ROOT/bench/metric-sets/ten.yaml";;
    *) echo "bench: unknown sets configuration $1 (prev, 1, 1a, 3, 10)" >&2; return 1;;
  esac
}
# keep_checkpoints FROM TO: while it runs, hard-links every completed checkpoint under FROM (a chk-N with its _metadata,
# written once every state file is) into TO. A link costs no copy, and the files outlive Flink's deletion of the
# checkpoints a later one subsumes.
keep_checkpoints() {
  local from="$1" to="$2" m c n
  mkdir -p "$to"
  while :; do
    for m in "$from"/*/chk-*/_metadata; do
      [ -f "$m" ] || continue
      c=$(dirname "$m"); n=$(basename "$c")
      [ -d "$to/$n" ] && continue
      if cp -al "$c" "$to/$n.part" 2>/dev/null; then mv "$to/$n.part" "$to/$n"; else rm -rf "$to/$n.part"; fi
    done
    sleep 1
  done
}
# sets_run NAME CONFIGURATION CLASSPATH [java options...]: one bounded run; writes $OUT/NAME.{properties,log,cpu} and
# $OUT/NAME.state (the largest checkpoint's state, read by SetStateSizes); sets S (process wall seconds).
sets_run() {
  local name="$1" config="$2" cp="$3" defs; shift 3
  defs=$(sets_definitions "$config")
  # shellcheck disable=SC2086 # no definitions file: no argument
  fresh_schema "bench_$name" $defs
  stream_config "$OUT/$name.properties" "$SETS_TOPIC" "bench_$name" "$OUT/$name"
  [ -n "$defs" ] && echo "metric-sets.file=$defs" >>"$OUT/$name.properties"
  keep_checkpoints "$OUT/$name/checkpoints" "$OUT/$name.kept" & local keeper=$!
  local t0; t0=$(now)
  cpu_of "$OUT/$name" java -Xmx2g "$@" -cp "$cp" dev.recount.stream.StreamJobMain stream --bounded --from-earliest \
    --config "$OUT/$name.properties" >"$OUT/$name.log" 2>&1
  S=$(secs "$t0" "$(now)")
  kill "$keeper"; wait "$keeper" 2>/dev/null || true
  # The largest of the checkpoints kept; the rest go. Not the middle one by number: on the loaded machine of
  # 2026-12-08 that was the first checkpoint (nothing open yet) or one after every window had fired in 4 of 10 runs.
  # The largest is mid-replay, when the de-dup and the windows hold the most.
  local kept largest
  kept=$(find "$OUT/$name.kept" -maxdepth 1 -name 'chk-*' | sort -t- -k2 -n)
  largest=$( (for c in $kept; do du -sb "$c"; done) | sort -n | tail -1 | cut -f2)
  for c in $kept; do [ "$c" = "$largest" ] || rm -rf "$c"; done
  rm -rf "$OUT/$name/checkpoints"
  if [ -n "$largest" ]; then
    java -cp "$STREAM_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.SetStateSizes "$largest" >"$OUT/$name.state" 2>&1 || true
  else
    echo "no checkpoint completed" >"$OUT/$name.state"
  fi
}
if wants sets; then
  SETS_TOPIC="bench-sets-$run_id"
  new_topics "$SETS_TOPIC" "$SETS_TOPIC-dlq" "$SETS_TOPIC-late"
  echo "bench: preloading $EVENTS events with attributes into $SETS_TOPIC (./recount generate, the demo's definitions)..." >&2
  echo "metric-sets.file=$ROOT/config/demo/metric-sets.yaml" >"$OUT/sets-generate.properties"
  t0=$(now)
  RECOUNT_NO_BUILD=1 RECOUNT_NO_LOCAL_ENV=1 "$ROOT/recount" generate --events "$EVENTS" --span 2h --start 2026-11-29T00:00:00Z --rate 0 \
    --topic "$SETS_TOPIC" --truth-dir "$OUT/sets-truth" --config "$OUT/sets-generate.properties" >"$OUT/sets-generate.log" 2>&1
  SETS_RECORDS=$(java -cp "$BENCH_CP" dev.recount.bench.Topics "$SETS_TOPIC" 2>/dev/null | tail -1)
  record sets_preload_s "$(secs "$t0" "$(now)")" s "$SETS_RECORDS records in $SETS_TOPIC, 3 partitions, with slot_id, country, device"
  SETS_ORDER=${SETS_CONFIGS//,/ }
  if [[ " $SETS_ORDER " == *" prev "* ]]; then
    PREV_CP=$(baseline_job_cp "$SETS_BASELINE_REV" "$OUT/sets-baseline-src")
  fi
  for round in $(seq 1 "$SETS_ROUNDS"); do
    order=$SETS_ORDER
    [ $((round % 2)) -eq 0 ] && order=$(tr ' ' '\n' <<<"$SETS_ORDER" | tac | tr '\n' ' ')
    declare -A SECONDS_OF=() CPU_OF=()
    for config in $order; do
      name="s_${config}_${round}_$run_id"; cp_run="$STREAM_CP"; [ "$config" = prev ] && cp_run="$PREV_CP"
      echo "bench: sets round $round, configuration $config..." >&2
      LOAD_BEFORE=$(cut -d' ' -f1 /proc/loadavg)
      sets_run "$name" "$config" "$cp_run"
      SECONDS_OF[$config]=$S; CPU_OF[$config]=$(cat "$OUT/$name.cpu")
      ROWS=$(java -cp "$DB_CP:$BENCH_CP" dev.recount.bench.Admin set-rows "bench_$name" $(sets_definitions "$config") 2>/dev/null \
        | awk '{printf "%s%s %s rows %s events", (NR>1?"; ":""), $1, $2, $5}')
      record "sets_${config}_${round}_s" "$S" s "$(awk -v n="$SETS_RECORDS" -v s="$S" 'BEGIN{printf "%.0f", n/s}') events/s; CPU $(cat "$OUT/$name.cpu") s; $(grep -o 'valid events [0-9,]*; invalid [0-9,]*' "$OUT/$name.log" | head -1); $(grep -o 'window firings [0-9,]*' "$OUT/$name.log" | head -1); load average (1 min) $LOAD_BEFORE before, $(cut -d' ' -f1 /proc/loadavg) after; $ROWS"
    done
    if [ -n "${SECONDS_OF[1]:-}" ]; then
      for config in $SETS_ORDER; do
        [ "$config" = 1 ] && continue
        record "sets_ratio_${config}_over_1_$round" "$(awk -v a="${SECONDS_OF[$config]}" -v b="${SECONDS_OF[1]}" 'BEGIN{printf "%.2f", b/a}')" x "throughput $config / throughput 1, round $round; per CPU second: $(awk -v a="${CPU_OF[$config]}" -v b="${CPU_OF[1]}" 'BEGIN{printf "%.2f", b/a}')"
      done
    fi
  done
  for config in $SETS_ORDER; do
    [ "$config" = 1 ] && continue
    MEDIAN=$(awk -v c="$config" '$1 ~ "^sets_ratio_"c"_over_1_[0-9]+$" {print $2}' "$RESULTS" | sort -n \
      | awk '{a[NR]=$1} END{if (NR) printf "%.2f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    record "sets_ratio_${config}_over_1" "$MEDIAN" x "median over $SETS_ROUNDS rounds of throughput $config / throughput 1 in the same round$([ "$config" = 3 ] && echo '; target >= 0.6 (a second job: 0.5)')"
  done
  # State: the checkpoint of the last round whose checkpoint held live windows (the last round's if none did).
  for config in $SETS_ORDER; do
    st="$OUT/s_${config}_${SETS_ROUNDS}_$run_id.state"
    for round in $(seq "$SETS_ROUNDS" -1 1); do
      grep -q '^RESULT set ' "$OUT/s_${config}_${round}_$run_id.state" 2>/dev/null && { st="$OUT/s_${config}_${round}_$run_id.state"; break; }
    done
    CHK=$(awk -v r="$(basename "$st" .state)" '$2=="checkpoint"{printf "%s checkpoint %s: %.1f MB", r, $3, $4/1e6}' "$st")
    OPS=$(awk '$2=="operator" && $4>=1000 {printf "%s%s %.3f MB", (n++?", ":""), $3, $4/1e6}' "$st")
    record "sets_state_${config}" "$(awk '$2=="checkpoint"{printf "%.1f", $4/1e6}' "$st")" MB "${CHK:-$(head -c 300 "$st")}; operators of 1 kB or more: $OPS"
    while read -r _ _ set window_keys entries bytes per_window_key per_entry; do
      record "sets_state_${config}_${set}_bytes_per_window_key" "$per_window_key" B "$window_keys live window keys (window start + dimension values) in $entries state entries (one per dimension values, $per_entry B each), $bytes bytes of the window operator's checkpointed state"
    done < <(grep '^RESULT set ' "$st")
  done
  for config in ${SETS_PROFILE//,/ }; do
    name="sp_${config}_$run_id"; cp_run="$STREAM_CP"; [ "$config" = prev ] && cp_run="$PREV_CP"
    echo "bench: sets, configuration $config with JFR..." >&2
    sets_run "$name" "$config" "$cp_run" -XX:StartFlightRecording=filename="$OUT/$name.jfr",settings=profile
    jfr_summary "$OUT/$name.jfr" "$OUT/$name-samples.txt" "$OUT/sets-profile-$config"
    record "sets_${config}_with_jfr_s" "$S" s "JFR profile settings on; CPU $(cat "$OUT/$name.cpu") s; top frames: $OUT/sets-profile-$config-*.txt"
  done
fi

# ---------------------------------------------------------------- 2. batch: Spark vs DuckDB on the same lake
# warm seconds of a variant: the mean of its rounds after the first (JIT warm-up) in a RESULT log
warm() { awk -v v="$2" '$1=="RESULT" && $2==v && $3>1 {s+=$NF; n++} END{if(n) printf "%.2f", s/n}' "$1"; }
first() { awk -v v="$2" '$1=="RESULT" && $2==v && $3==1 {print $NF; exit}' "$1"; }
if wants batch || wants levers || wants compact; then
  LAKE="$ROOT/bench/target/lake-$BATCH_EVENTS"
fi
if wants batch; then
  echo "bench: batch lake ($BATCH_EVENTS events) + recount backfill range (BatchRecomputeBench)..." >&2
  (cd "$ROOT" && java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.BatchRecomputeBench --events "$BATCH_EVENTS" \
     --lake "$LAKE" --runs 2 --archived-rows on) >"$OUT/batch-recompute.log" 2>&1
  # Run 1 fills a fresh schema; run 2 is the same day again, unchanged (what a nightly rerun costs). Both check the
  # lake's hours against lake_archived_rows, as a run does wherever the stream records them.
  RUN1=$(grep '^run 1:' "$OUT/batch-recompute.log"); RUN2=$(grep '^run 2:' "$OUT/batch-recompute.log")
  phases() { grep -o 'compute [0-9]* ms, staging [0-9]* ms, replace [0-9]* ms' <<<"$1"; }
  record backfill_range_s "$(awk '{print $3}' <<<"$RUN1")" s "recount backfill range end to end (Spark + PostgreSQL staging/replace), $(phases "$RUN1")"
  record backfill_range_rerun_s "$(awk '{print $3}' <<<"$RUN2")" s "the same day again, nothing changed: $(grep -o '[0-9]* window rows written, [0-9]* unchanged' <<<"$RUN2"); $(phases "$RUN2")"
  echo "bench: Spark (recount's plan, both query texts) vs DuckDB (both query texts), $BATCH_ROUNDS rounds each..." >&2
  java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.SparkLakeQuery "$LAKE" 2026-11-28 "$BATCH_ROUNDS" >"$OUT/spark.log" 2>&1
  java -Xmx4g -cp "$BENCH_CP" dev.recount.bench.DuckDbLakeQuery "$LAKE" 2026-11-28 "$BATCH_ROUNDS" 2 >"$OUT/duckdb.log" 2>&1
  LR=$(awk '$1=="RESULT"{s=$4} END{print s}' "$OUT/duckdb.log")
  for v in spark-recount spark-sql-rank spark-sql-candidates; do
    record "${v}_s" "$(warm "$OUT/spark.log" "$v")" s "warm (mean of rounds 2..$BATCH_ROUNDS, alternating), local[2], $LR lake rows; first: $(first "$OUT/spark.log" "$v") s"
  done
  for v in duckdb-sql-rank duckdb-sql-candidates; do
    record "${v}_s" "$(warm "$OUT/duckdb.log" "$v")" s "warm (mean of rounds 2..$BATCH_ROUNDS, alternating), 2 threads; first: $(first "$OUT/duckdb.log" "$v") s"
  done
  SP=$(warm "$OUT/spark.log" spark-recount)
  DK=$(awk -v a="$(warm "$OUT/duckdb.log" duckdb-sql-rank)" -v b="$(warm "$OUT/duckdb.log" duckdb-sql-candidates)" 'BEGIN{print (a<b)?a:b}')
  record ratio_spark_over_duckdb "$(awk -v a="$SP" -v b="$DK" 'BEGIN{printf "%.2f", a/b}')" x "recount's Spark plan / DuckDB's faster query text (same files, same day)"
  for q in sql-rank sql-candidates; do
    record "ratio_spark_over_duckdb_$q" "$(awk -v a="$(warm "$OUT/spark.log" "spark-$q")" -v b="$(warm "$OUT/duckdb.log" "duckdb-$q")" 'BEGIN{printf "%.2f", a/b}')" x "same query text ($q) in both engines"
  done
fi

# ---------------------------------------------------------------- 2b. batch levers, one at a time (SparkLevers)
# Settings a session can change run alternately in one JVM; settings that need a new session run in separate JVMs,
# alternating with the default. Every variant recomputes the same day of the same lake.
if wants levers; then
  VARIANTS="recount,sort,previous,before,recount@spark.sql.shuffle.partitions=4,recount@spark.sql.shuffle.partitions=8,recount@spark.sql.shuffle.partitions=32"
  VARIANTS="$VARIANTS,recount@spark.sql.files.maxPartitionBytes=128m,recount@spark.sql.files.maxPartitionBytes=8m"
  VARIANTS="$VARIANTS,recount@spark.sql.adaptive.enabled=false,recount@spark.sql.codegen.wholeStage=false"
  echo "bench: batch levers, $LEVER_ROUNDS rounds of: $VARIANTS" >&2
  java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.SparkLevers "$LAKE" 2026-11-28 "$LEVER_ROUNDS" "$VARIANTS" >"$OUT/levers.log" 2>&1
  BASE=$(warm "$OUT/levers.log" recount)
  for v in ${VARIANTS//,/ }; do
    W=$(warm "$OUT/levers.log" "$v")
    record "lever $v" "$W" s "warm (mean of rounds 2..$LEVER_ROUNDS); per round: $(awk -v v="$v" '$1=="RESULT" && $2==v {printf "%s ", $NF}' "$OUT/levers.log"); vs recount: $(awk -v a="$W" -v b="$BASE" 'BEGIN{printf "%.2f", a/b}')x time"
  done
  for round in $(seq 1 2); do
    for jvm in default "-Dspark.shuffle.compress=false -Dspark.shuffle.spill.compress=false" "-Dspark.serializer=org.apache.spark.serializer.KryoSerializer"; do
      name=$(echo "$jvm" | tr -c 'a-zA-Z0-9=.\n' '_')
      opts=""; [ "$jvm" = default ] || opts="$jvm"
      # shellcheck disable=SC2086
      java -Xmx8g $OPENS $opts -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.SparkLevers "$LAKE" 2026-11-28 2 recount >"$OUT/levers-jvm-$name-$round.log" 2>&1
      record "lever jvm $jvm round $round" "$(warm "$OUT/levers-jvm-$name-$round.log" recount)" s "new JVM, recount's plan, second run of two"
    done
  done
fi

# ---------------------------------------------------------------- 2c. backfill range on a small-file lake vs compacted
# The same day written as a stream job writes it (about 720 small files per hour: 2 tasks, a file per checkpoint of
# 10 s), then a copy of it compacted by `backfill compact`; `backfill range` over the day on each, alternating.
if wants compact; then
  SMALL="$ROOT/bench/target/lake-small-$BATCH_EVENTS"; COMPACTED="$ROOT/bench/target/lake-compacted-$BATCH_EVENTS"
  echo "bench: small-file lake ($BATCH_EVENTS events, ~720 files per hour)..." >&2
  (cd "$ROOT" && java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.BatchRecomputeBench --events "$BATCH_EVENTS" \
     --lake "$SMALL" --files-per-hour 720 --runs 0) >"$OUT/compact-generate.log" 2>&1
  rm -rf "$COMPACTED"; cp -r "$SMALL" "$COMPACTED"
  echo "bench: backfill compact of the copy..." >&2
  (cd "$ROOT" && java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.BatchRecomputeBench --events "$BATCH_EVENTS" \
     --lake "$COMPACTED" --files-per-hour 720 --compact --runs 0) >"$OUT/compact.log" 2>&1
  record compact_s "$(awk '/^compact:/{print $2}' "$OUT/compact.log")" s "backfill compact --date 2026-11-28, local[2]: $(grep -o 'lake files: [0-9]*' "$OUT/compact.log" | head -1) -> $(grep -o 'lake files now: [0-9]*' "$OUT/compact.log"); $(grep -o '24 hours, [^;]*' "$OUT/compact.log")"
  for round in $(seq 1 2); do
    for lake in small compacted; do
      dir="$SMALL"; [ "$lake" = compacted ] && dir="$COMPACTED"
      echo "bench: backfill range on the $lake lake, round $round..." >&2
      (cd "$ROOT" && java -Xmx8g $OPENS -cp "$BATCH_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.BatchRecomputeBench --events "$BATCH_EVENTS" \
         --lake "$dir" --files-per-hour 720 --runs 2) >"$OUT/range-$lake-$round.log" 2>&1
      record "range_${lake}_round${round}_s" "$(awk '/^run 2:/{print $3}' "$OUT/range-$lake-$round.log")" s "second run of two in one JVM; $(grep -o 'lake files: [0-9]*' "$OUT/range-$lake-$round.log"); $(grep '^run 2:' "$OUT/range-$lake-$round.log" | grep -o 'compute [0-9]* ms')"
    done
  done
fi

# ---------------------------------------------------------------- 3. reconcile (ReconcileBench, its own stack)
if wants reconcile; then
  # The bench runs from the reconciler's test classes. Built with -am, so its classpath holds this tree's core
  # and db (target/classes), not whatever SNAPSHOT jars ~/.m2 has: the migrations must match the reconciler.
  echo "bench: building the reconciler's test classes..." >&2
  # package, not only test-compile: the bench's reruns through `./recount reconcile` need the launcher's jars.
  if (cd "$ROOT" && { mvn -q -o -pl reconciler -am package -DskipTests dependency:build-classpath -Dmdep.includeScope=test \
        -Dmdep.outputFile=target/test.classpath || mvn -q -pl reconciler -am package -DskipTests dependency:build-classpath \
        -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath; }) >"$OUT/reconcile-build.log" 2>&1; then
    KEYS=$((1440 * 100 * RECONCILE_CHANNELS))
    echo "bench: ReconcileBench ($KEYS keys)..." >&2
    # With the JVM flags `./recount reconcile` starts with (the root pom's <reconciler.jvm.flags>).
    read -r -a RECONCILER_FLAGS <<<"$(pom_property reconciler.jvm.flags)"
    # Then three more reruns as users run them (`./recount reconcile`, each its own JVM; -Dbench.cli-reruns).
    (cd "$ROOT" && java -Xmx2g "${RECONCILER_FLAGS[@]}" -Dbench.cli-reruns=3 -Drecount.root="$ROOT" -cp "reconciler/target/test-classes:reconciler/target/classes:$(cat reconciler/target/test.classpath)" \
      dev.recount.reconcile.bench.ReconcileBench 100 "$RECONCILE_CHANNELS") >"$OUT/reconcile.log" 2>&1 || true
    record reconcile_first_keys_per_s "$(awk -F'|' '/^\| first/{gsub(/[ ,]/,"",$10); print $10}' "$OUT/reconcile.log")" keys/s "$KEYS keys, first run (finalizes + corrects), total $(awk -F'|' '/^\| first/{gsub(/ /,"",$9); print $9}' "$OUT/reconcile.log") s"
    record reconcile_rerun_keys_per_s "$(awk -F'|' '/^\| rerun/{gsub(/[ ,]/,"",$10); print $10}' "$OUT/reconcile.log")" keys/s "rerun, no change, total $(awk -F'|' '/^\| rerun/{gsub(/ /,"",$9); print $9}' "$OUT/reconcile.log") s"
    CLI_WALLS=$(awk -F'|' '/^\| `\.\/recount reconcile` rerun [0-9]+ \(/{gsub(/ /,"",$9); print $9}' "$OUT/reconcile.log" | sort -n)
    record reconcile_cli_rerun_s "$(echo "$CLI_WALLS" | awk '{a[NR]=$1} END{print (NR ? a[int((NR+1)/2)] : "-")}')" s \
      "median process wall of $(echo "$CLI_WALLS" | grep -c .) reruns by ./recount reconcile (own JVM): $(echo $CLI_WALLS)"
  else
    record reconcile "not run" - "building the reconciler's test classes failed: $OUT/reconcile-build.log"
  fi
fi

# ---------------------------------------------------------------- 4. memory at ~100k window keys
if wants memory; then
  echo "bench: memory (StreamThroughputBench --keys 100000, -Xmx$MEMORY_XMX)..." >&2
  # A full GC every 3 s (jcmd GC.run) while the job runs: the heap after a full GC is the live set, garbage excluded.
  java -Xmx"$MEMORY_XMX" -Xlog:gc:file="$OUT/gc-memory.log" -cp "$STREAM_CP:$ROOT/bench/target/bench-$V.jar" dev.recount.bench.StreamThroughputBench \
    --events 1000000 --keys 100000 >"$OUT/memory.log" 2>&1 &
  MEM_PID=$!
  while kill -0 "$MEM_PID" 2>/dev/null; do sleep 3; jcmd "$MEM_PID" GC.run >/dev/null 2>&1 || true; done
  MEM_RC=0; wait "$MEM_PID" || MEM_RC=$?
  LIVE=$(grep -E 'Pause Full' "$OUT/gc-memory.log" | grep -o '[0-9]*M->[0-9]*M' | awk -F'->' '{sub(/M/,"",$2); if ($2+0>m) m=$2+0} END{print m}')
  PEAK_AFTER=$(grep -E 'Pause (Young|Full)' "$OUT/gc-memory.log" | grep -o '[0-9]*M->[0-9]*M'  | awk -F'->' '{sub(/M/,"",$2); if ($2+0>m) m=$2+0} END{print m}')
  record memory_live_heap_after_full_gc_mb "$LIVE" MiB "max heap after a full GC (one every 3 s), -Xmx$MEMORY_XMX, exit $MEM_RC, 1M events, 100,000 campaign x channel keys; max after any GC: ${PEAK_AFTER} MiB; $(grep -o 'stream_window_metrics: .*' "$OUT/memory.log"); $(grep -o '= [0-9,]* events/s' "$OUT/memory.log")"
fi

# ---------------------------------------------------------------- 5. freshness at a steady rate
if wants freshness; then
  # One run per mode: window-close (as shipped: a checkpoint as soon as a window closes) and interval (periodic
  # checkpoints only, the job before stream.checkpoint-on-window-close).
  for mode in ${FRESH_MODES//,/ }; do
    FT="bench-fresh-$mode-$run_id"; new_topics "$FT" "$FT-dlq" "$FT-late"
    fresh_schema "bench_f_${mode//-/_}_$run_id"; stream_config "$OUT/f-$mode.properties" "$FT" "bench_f_${mode//-/_}_$run_id" "$OUT/f-$mode"
    echo "stream.checkpoint-on-window-close=$([ "$mode" = window-close ] && echo true || echo false)" >>"$OUT/f-$mode.properties"
    echo "bench: freshness ($mode) at $RATE events/s ($FRESH_SECONDS s of traffic)..." >&2
    java -Xmx2g -cp "$STREAM_CP" dev.recount.stream.StreamJobMain stream --from-earliest --config "$OUT/f-$mode.properties" >"$OUT/f-$mode-job.log" 2>&1 &
    JOB_PID=$!
    for _ in $(seq 1 120); do grep -q "running" "$OUT/f-$mode-job.log" 2>/dev/null && break; sleep 1; done
    java -cp "$BENCH_CP" dev.recount.bench.RateProducer "$FT" "$RATE" "$FRESH_SECONDS" >"$OUT/f-$mode-generate.log" 2>&1 &
    GEN_PID=$!
    # What the job does meanwhile (checkpoint durations per operator, watermark lag, Kafka lag, busy/back-pressure,
    # GC, load average): bench/freshness-sampler.sh, from the job's read-only REST API.
    SAMPLER_PID=""
    WEB_UI=$(grep -o 'Flink Web UI: http://[0-9.:]*' "$OUT/f-$mode-job.log" | head -1 | cut -d' ' -f4)
    if [ -n "$WEB_UI" ] && command -v jq >/dev/null; then
      "$ROOT/bench/freshness-sampler.sh" "$WEB_UI" "$OUT/f-$mode-sampler" >"$OUT/f-$mode-sampler.log" 2>&1 &
      SAMPLER_PID=$!
    fi
    java -cp "$BENCH_CP" dev.recount.bench.FreshnessProbe "bench_f_${mode//-/_}_$run_id" $((FRESH_SECONDS + 10)) 30000 1 >"$OUT/freshness-$mode.log" 2>&1
    wait "$GEN_PID" 2>/dev/null || true; kill "$JOB_PID" 2>/dev/null || true; wait "$JOB_PID" 2>/dev/null || true
    [ -n "$SAMPLER_PID" ] && { wait "$SAMPLER_PID" 2>/dev/null || true; }
    read -r P50 P99 NW < <(awk '/^RESULT freshness/{print $3, $4, $5}' "$OUT/freshness-$mode.log")
    record "freshness_${mode}_p50_ms" "$P50" ms "$(tail -1 "$OUT/f-$mode-generate.log"), $NW windows (first skipped)"
    record "freshness_${mode}_p99_ms" "$P99" ms "$(grep -o 'all \[.*' "$OUT/freshness-$mode.log" | cut -c1-300)"
  done
fi

java -cp "$BENCH_CP" dev.recount.bench.Report "$RESULTS" "$OUT" "$ROOT/bench/results/$(basename "$OUT").md" "$OUT/commands.tsv"
