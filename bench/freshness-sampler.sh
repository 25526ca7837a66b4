#!/usr/bin/env bash
# What the streaming job does while bench/run.sh measures freshness, from its read-only REST API. Not a test.
#
#   bench/freshness-sampler.sh <rest-url> <out-dir> [interval-seconds, default 2]
#
# Runs until the job's REST API stops answering (the job ended). Writes, in <out-dir>:
#   samples.tsv      one line per interval: wall ms, 1-min load average, the window operator's watermark lag
#                    (wall - min input watermark), the source's pending records (sum over subtasks: Kafka lag),
#                    busy/back-pressured ms per s (max over subtasks) of every vertex, the JVM's heap, and the
#                    collection count and ms of each of its collectors (named as the JVM names them)
#   checkpoints.tsv  one line per completed checkpoint: id, trigger ms, end-to-end ms, full state bytes, and per
#                    vertex the max over subtasks of sync ms, async ms, alignment ms, start delay ms and state bytes
# Needs curl and jq.
set -uo pipefail
URL="$1"; OUT="$2"; EVERY="${3:-2}"
mkdir -p "$OUT"
get() { curl -sf --max-time 5 "$URL$1"; }
JOB=""
for _ in $(seq 1 120); do
  JOB=$(get /jobs | jq -r '.jobs[] | select(.status=="RUNNING") | .id' 2>/dev/null | head -1)
  [ -n "$JOB" ] && break; sleep 1
done
[ -n "$JOB" ] || { echo "sampler: no running job at $URL" >&2; exit 1; }
VERTICES=$(get "/jobs/$JOB" | jq -r '.vertices[] | "\(.id)\t\(.name)"')
short() { echo "$1" | cut -c1-40 | tr ' \t:' '___'; }
TM=$(get /taskmanagers | jq -r '.taskmanagers[0].id')
# The collectors as Flink reports them: G1_Young_Generation and G1_Old_Generation with G1, PS_Scavenge and
# PS_MarkSweep with the parallel collector, Copy and MarkSweepCompact with the serial one.
# The REST API lists a task manager's metrics only once it has fetched them: ask until it does.
GCS=""
for _ in $(seq 1 30); do
  GCS=$(get "/taskmanagers/$TM/metrics" | jq -r '.[].id | select(startswith("Status.JVM.GarbageCollector.")
    and endswith(".Count")) | sub("^Status.JVM.GarbageCollector."; "") | sub("\\.Count$"; "")')
  [ -n "$GCS" ] && break; sleep 1
done
JVM_METRICS="Status.JVM.Memory.Heap.Used"
for g in $GCS; do JVM_METRICS="$JVM_METRICS,Status.JVM.GarbageCollector.$g.Count,Status.JVM.GarbageCollector.$g.Time"; done
{
  printf 'wall_ms\tload1\twatermark_lag_ms\tsource_pending'
  while IFS=$'\t' read -r _ name; do printf '\tbusy:%s\tbp:%s' "$(short "$name")" "$(short "$name")"; done <<<"$VERTICES"
  printf '\theap_used_mb'
  for g in $GCS; do printf '\tgc_count:%s\tgc_ms:%s' "$g" "$g"; done
  printf '\n'
} >"$OUT/samples.tsv"
printf 'id\ttrigger_ms\tend_to_end_ms\tstate_bytes\tvertex\tsync_ms\tasync_ms\talignment_ms\tstart_delay_ms\tvertex_state_bytes\n' >"$OUT/checkpoints.tsv"
SEEN=" "
WINDOW_ID=$(echo "$VERTICES" | awk -F'\t' '$2 ~ /^window-metrics/{print $1; exit}')
SOURCE_ID=$(echo "$VERTICES" | head -1 | cut -f1)
while get "/jobs/$JOB" >/dev/null; do
  now=$(date +%s%3N)
  load=$(cut -d' ' -f1 /proc/loadavg)
  wm=$(get "/jobs/$JOB/vertices/$WINDOW_ID/watermarks" | jq '[.[] | select(.id|endswith("currentInputWatermark")) | .value|tonumber] | min // empty')
  lag=""; [ -n "$wm" ] && [ "$wm" -gt 0 ] 2>/dev/null && lag=$((now - wm))
  pending=$(get "/jobs/$JOB/vertices/$SOURCE_ID/subtasks/metrics?get=pendingRecords&agg=sum" | jq -r '.[0].sum // empty')
  line="$now\t$load\t$lag\t$pending"
  while IFS=$'\t' read -r vid _; do
    m=$(get "/jobs/$JOB/vertices/$vid/subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond&agg=max")
    busy=$(echo "$m" | jq -r '.[] | select(.id=="busyTimeMsPerSecond") | .max // empty')
    bp=$(echo "$m" | jq -r '.[] | select(.id=="backPressuredTimeMsPerSecond") | .max // empty')
    line="$line\t$busy\t$bp"
  done <<<"$VERTICES"
  jvm=$(get "/taskmanagers/$TM/metrics?get=$JVM_METRICS")
  jv() { echo "$jvm" | jq -r --arg k "$1" '.[] | select(.id==$k) | .value'; }
  heap=$(jv Status.JVM.Memory.Heap.Used); heap=$(( ${heap:-0} / 1048576 ))
  line="$line\t$heap"
  for g in $GCS; do
    line="$line\t$(jv "Status.JVM.GarbageCollector.$g.Count")\t$(jv "Status.JVM.GarbageCollector.$g.Time")"
  done
  printf "$line\n" >>"$OUT/samples.tsv"
  # Completed checkpoints not written yet (the history holds the last few: sample often enough).
  for id in $(get "/jobs/$JOB/checkpoints" | jq -r '.history[] | select(.status=="COMPLETED") | .id'); do
    case "$SEEN" in *" $id "*) continue;; esac
    d=$(get "/jobs/$JOB/checkpoints/details/$id") || continue
    SEEN="$SEEN$id "
    head=$(echo "$d" | jq -r '[.id, .trigger_timestamp, .end_to_end_duration, .state_size] | @tsv')
    while IFS=$'\t' read -r vid name; do
      row=$(get "/jobs/$JOB/checkpoints/details/$id/subtasks/$vid" | jq -r '.summary | [.checkpoint_duration.sync.max,
        .checkpoint_duration.async.max, .alignment.duration.max, .start_delay.max, .state_size.max] | @tsv' 2>/dev/null)
      printf '%s\t%s\t%s\n' "$head" "$(short "$name")" "$row" >>"$OUT/checkpoints.tsv"
    done <<<"$VERTICES"
  done
  sleep "$EVERY"
done
