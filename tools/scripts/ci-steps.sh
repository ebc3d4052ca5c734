# CI's steps as functions, sourced by .ci/run, which reads as the order they run in. The whole
# suite (`npm test`) is the long step; the Node 20 core and the cluster step run beside it, each
# with its output in a log file of its own that .ci/run prints at the end, so the runs do not
# interleave. Expects `cache`, `timings` and `ci_start` set by .ci/run.

# A one-line note, on CI's own output (fd 3 inside the side steps) and in the current log.
ci_note() {
  local line
  line="[ci +$(( $(date +%s) - ci_start )) s] $*"
  echo "$line"
  if { true >&3; } 2>/dev/null; then echo "$line" >&3; fi
}

# The setting $1 (default $2) moved by $3: the side steps' own ports, clear of the suite's.
ci_port() {
  local value="${!1:-$2}"
  echo $(( value + $3 ))
}

# Toxiproxy first (the fault tests need it within minutes), then the Schema Registry and
# Temporal's server, SQL tool and UI server side by side (the registry's build is mostly Maven
# fetching jars, Temporal's is compiling: in series the cluster step, which waits for Temporal's,
# started about 260 s later), all niced, in the background; the exit status lands in
# "$build_status" (read by ci_await_build).
ci_background_build() {
  build_log="$cache/logs/stack-build.log"
  build_status="$cache/logs/stack-build.status"
  rm -f "$build_status"
  ( status=0
    nice -n 10 npx tsx tools/cli.ts stack build --with toxiproxy --no-temporal >"$build_log" 2>&1 || status=$?
    nice -n 10 npx tsx tools/cli.ts stack build --with schema-registry --no-temporal >"$build_log.registry" 2>&1 &
    registry=$!
    nice -n 10 npx tsx tools/cli.ts stack build >>"$build_log" 2>&1 || status=$?
    wait "$registry" || status=$?
    cat "$build_log.registry" >>"$build_log"
    echo "$status" >"$build_status" ) &
}

# Waits (bounded) for the background build; prints its log, and its end when it failed.
ci_await_build() {
  local waited=0
  while [ ! -s "$build_status" ]; do
    if [ "$waited" -ge 3600 ]; then
      ci_note "the background build did not end within 3600 s"
      return 1
    fi
    sleep 5
    waited=$(( waited + 5 ))
  done
  if [ "$(cat "$build_status")" != 0 ]; then
    ci_note "building the Schema Registry or Temporal's server failed:"
    tail -20 "$build_log"
    return 1
  fi
  cat "$build_log"
}

# One step: its command, timed, with a note when it starts and ends.
ci_step() {
  local name=$1 t0 status=0
  shift
  t0=$(date +%s)
  ci_note "$name: started"
  "$@" || status=$?
  ci_note "$name: exit status $status after $(( $(date +%s) - t0 )) s"
  return "$status"
}

# The core subset on the machine's Node 20, against the suite's stack, dev server included: its
# tests name their databases, topics, task queues and workflows uniquely, as every test of the
# suite does. Its workers' metrics ports are its own (METRICS_PORT_BASE: each worker binds base +
# 0..2 and base + 10..12).
ci_node20_step() {
  MOCHA_TIMINGS_FILE="$timings/node20-core.json" KEEP_STACK=1 \
    METRICS_PORT_BASE="$(ci_port METRICS_PORT_BASE 19400 100)" \
    ci_step "Node 20 core" npm run test:node -- 20
}

# The Temporal-dependent core on Node 22 against Temporal's cluster, on the suite's PostgreSQL and
# Kafka: its processes on ports of their own (LOCAL_TEMPORAL_PORT + 200: the balancer and the
# frontends' gRPC and HTTP ports up to 8 above it, membership ports 300 below), its own UI port
# and workers' metrics ports. Its `stack run` starts only the cluster, and at its end stops only
# that (stackDown stops the configured kind of Temporal only), never the suite's dev server.
ci_cluster_step() {
  MOCHA_TIMINGS_FILE="$timings/node22-cluster.json" TEMPORAL_SERVER=cluster \
    LOCAL_TEMPORAL_PORT="$(ci_port LOCAL_TEMPORAL_PORT 7233 200)" \
    LOCAL_TEMPORAL_UI_PORT="$(ci_port LOCAL_TEMPORAL_UI_PORT 8233 200)" \
    METRICS_PORT_BASE="$(ci_port METRICS_PORT_BASE 19400 200)" \
    ci_step "Node 22 cluster core" npm run test:node -- 22
}

# The steps beside the suite whose process is $1, against the PostgreSQL and Kafka its `stack run`
# started (KEEP_STACK=1 keeps them up after it ends): once that stack is up, the Node 20 core
# (nothing to build, so it is done while the build still runs), then, once the build is done, the
# cluster step. Returns non-zero when either failed or could not start.
ci_side_steps() {
  local suite=$1 status=0
  if ! npx tsx tools/scripts/await-stack.ts "$suite" 1200; then
    ci_note "side steps: skipped, the suite's stack never came up"
    return 1
  fi
  ci_node20_step || status=1
  ci_await_build || return 1
  ci_cluster_step || status=1
  return "$status"
}
