#!/usr/bin/env bash
# Controller benchmark (numbers, not a test): a sweep of N PropertyOverrides, each point on a fresh
# cluster, created as fast as one client can, until the controller has settled and the cluster
# holds what it should (tests/e2e/bench.py says how both are told). Per point: the controller's
# CPU, reconciles and writes per PropertyOverride, peak RSS per PropertyOverride above its RSS at
# N=0 after sync, convergence time, last create -> last write, the load, the API server's own
# CPU and peak RSS; then the fitted log-log exponent over the sweep. docs/benchmarks.md has the
# method and the numbers.
#
#   bash tests/e2e/bench_controller.sh BUILD [N] [options]  (make bench-controller ARGS="...")
#     --server real|local   the real kube-apiserver + etcd (.deps/bin, the default) or tests/apiserver
#     --points N,N,...      the sweep (default 2500,5000,10000,20000); a bare N is --points N
#     --per-target P        targets scaled so that each holds P (default 50: none capped, the cap is 100)
#     --capped N:T          one more run with N over T targets (more than 100 each: TargetFull);
#                           "none" for no such run (default: the smallest point over N/200 targets)
#     --restart             after each point: SIGTERM the controller, start it again, report its
#                           ready time, when its workers started, requeues and writes until settled
#     --rate R              R creates a second (default 0: as fast as one client can); paced, each
#                           target sees a create every targets/R seconds: at 10,000 over 200
#                           targets, --rate 8 gives each the 25 s spacing 100,000 has on the real
#                           server (about 80 creates a second), hence its reconciles per create
#     --webhook on|off      the validating webhook registered with the API server as deploy/ ships it
#                           (lc_register_webhook: PropertyOverride creates and spec changes, target
#                           writes whose builtin/property-override entries changed, all
#                           but its own: it runs as deploy/'s username, LC_CONTROLLER_USER), so the
#                           admissions it answers count in the controller's CPU as they do for users
#                           (default on; the local server calls no webhook)
#     --mutating on|off     with --webhook on, the mutating webhooks too, as deploy/ ships them
#                           (e2e_register_mutating, under the controller's username): a new
#                           PropertyOverride gets the finalizer in its create (default on; off
#                           measures the controller writing each finalizer itself)
#     --patches same|distinct  what the PropertyOverrides of a target set: the same field of every
#                           outbound cluster (default: all overlap, each status names three peers:
#                           the worst case), or each its own upstream's (resourceFilter.services:
#                           none overlap, as PropertyOverrides tuning different upstreams)
#     --quiet S             seconds without a controller write that count as settled (default 8)
#     --timeout S           per point (default 1800)
#     --out FILE            the JSON report lines (default $TMPDIR/bench-controller-DATE.jsonl);
#                           tests/e2e/bench_table.py FILE prints them as the table below
#   PO_BENCH_CONTROLLER_FLAGS  further controller flags (e.g. --target-batch-window 0 to compare)
#   PO_BENCH_PERF=<file>  a perf profile (cpu-clock: VMs often lack the cycles event) of the controller
#                         during the largest point (PO_BENCH_PERF_HZ,
#                         default 999 samples/s; PO_BENCH_PERF_GRAPH fp or dwarf, default fp)
#   PO_BENCH_WRAP="CMD ARGS"  the controller run under a command, e.g. "valgrind --trace-children=yes --tool=callgrind
#                         --callgrind-out-file=/tmp/cg.%p": instruction counts per function
#                         (callgrind_annotate --inclusive=yes), divided by the run's reconciles and
#                         events for the cost of one; the run is ~50x slower, so batching differs
#   PO_BENCH_PERF_RESTART=<file>  the same of the (first) restarted controller, from its start until
#                         it is ready: the cold start's lists and index; system-wide (perf -p misses
#                         the threads started later): perf report --comm propertyoverrid
#                         --sort pid,symbol, and read the controller's pid (other processes share the name)
#   PO_BENCH_RESTART_FLAGS="F;F"  with --restart: one restart per flag set (added to the run's), e.g.
#                         "--kube-list-page-size 500;--kube-list-page-size 0" to compare page sizes
#   PO_BENCH_RESTART_BUILDS="DIR;DIR"  with --restart: the restarts' controller binaries, each build's
#                         restarts (one per flag set) in turn on the same cluster, labelled with the
#                         build (default: BUILD alone), so two builds' cold starts are compared
#                         without creating N PropertyOverrides twice
# The machine's load changes every figure: each run records it (start, end, mean of 1-minute
# samples). The controller runs without leader election (one replica: no lease writes in the
# counts) and with --consul-sync-status=ignore (no consul-k8s here).
set -u
build=${1:?usage: bench_controller.sh BUILD [--server real|local] [--points N,...] [--per-target P] [--capped N:T|none] [--restart] [--rate R] [--webhook on|off] [--mutating on|off] [--patches same|distinct] [--quiet S] [--timeout S] [--out FILE]}
shift
server=real points=2500,5000,10000,20000 per_target=50 capped= restart=0 rate=0 quiet=8 timeout=1800 out= webhook=on mutating=on patches=same
while [ $# -gt 0 ]; do
  case $1 in
  [0-9]*) points=$1; shift ;; # the earlier form: bench_controller.sh BUILD N
  --server) server=$2; shift 2 ;;
  --points) points=$2; shift 2 ;;
  --per-target) per_target=$2; shift 2 ;;
  --capped) capped=$2; shift 2 ;;
  --restart) restart=1; shift ;;
  --rate) rate=$2; shift 2 ;;
  --quiet) quiet=$2; shift 2 ;;
  --webhook) webhook=$2; shift 2 ;;
  --mutating) mutating=$2; shift 2 ;;
  --patches) patches=$2; shift 2 ;;
  --timeout) timeout=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  *) echo "bench_controller.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
case $server in real | local) ;; *) echo "bench_controller.sh: --server takes real or local, not '$server'" >&2; exit 2 ;; esac
case $patches in same | distinct) ;; *) echo "bench_controller.sh: --patches takes same or distinct, not '$patches'" >&2; exit 2 ;; esac
case $webhook in on | off) ;; *) echo "bench_controller.sh: --webhook takes on or off, not '$webhook'" >&2; exit 2 ;; esac
case $mutating in on | off) ;; *) echo "bench_controller.sh: --mutating takes on or off, not '$mutating'" >&2; exit 2 ;; esac
[ "$server" = local ] && webhook=off
label=$server
[ "$webhook" = on ] && label="$server+webhook"
[ "$webhook" = on ] && [ "$mutating" = on ] && label="$label+mutating"
case $points in *[!0-9,]* | "" | ,* | *,,* | *,) echo "bench_controller.sh: --points takes counts like 2500,10000, not '$points'" >&2; exit 2 ;; esac
case $rate in "" | *[!0-9.]* | *.*.*) echo "bench_controller.sh: --rate takes creates a second like 8 or 2.5, not '$rate'" >&2; exit 2 ;; esac
PO_APISERVER=$server
# No audit log unless asked (LC_AUDIT=1, as e2e_bench_real does): the kube-apiserver CPU this
# reports is the server's as users run it.
LC_AUDIT=${LC_AUDIT:-0}
. "$(dirname "$0")/lib.sh"
if [ "$server" = real ] && ! lc_have_real; then
  echo "bench_controller.sh: no kube-apiserver and etcd in $(lc_real_bin): run scripts/build-kube.sh, or use --server local" >&2
  exit 2
fi
out=${out:-${TMPDIR:-/tmp}/bench-controller-$(date +%Y%m%d-%H%M%S).jsonl}
: >"$out"
IFS=, read -r -a sweep <<<"$points"
largest=0
for n in "${sweep[@]}"; do [ "$n" -gt "$largest" ] && largest=$n; done
runs=()
for n in "${sweep[@]}"; do runs+=("$n:$(((n + per_target - 1) / per_target))"); done
if [ -z "$capped" ]; then
  smallest=${sweep[0]}
  for n in "${sweep[@]}"; do [ "$n" -lt "$smallest" ] && smallest=$n; done
  capped="$smallest:$(((smallest + 199) / 200))"
fi
[ "$capped" != none ] && runs+=("$capped")

flags=(--log-level warn --kube-api-qps 2000 --kube-api-burst 4000 --leader-elect=false ${PO_BENCH_CONTROLLER_FLAGS:-})
echo "controller: ${flags[*]}; server: $server; webhook: $webhook; mutating: $mutating; patches: $patches; quiet: $quiet s; machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"

# As lc_controller, but waiting as long as the start takes (at 100,000 it is the figure measured).
start_controller() {
  LC_WEBHOOK_PORT=$(lc_free_port)
  LC_PROBE_PORT=$(lc_free_port)
  started_at=$(date +%s.%N)
  # with the webhook, as deployed: the controller's own username, whose target writes the
  # webhook's not-the-controller condition leaves out
  local kubeconfig=$KUBECONFIG as=()
  [ "$webhook" = on ] && kubeconfig=$LC_CONTROLLER_KUBECONFIG as=(--controller-username "$LC_CONTROLLER_USER")
  ${PO_BENCH_WRAP:-} "${ctl_build:-$LC_BUILD}/propertyoverride" controller --kubeconfig "$kubeconfig" "${as[@]}" \
    --webhook-bind-address "127.0.0.1:$LC_WEBHOOK_PORT" \
    --webhook-cert-file "$LC_WORK/tls/tls.crt" --webhook-key-file "$LC_WORK/tls/tls.key" \
    --health-probe-bind-address "127.0.0.1:$LC_PROBE_PORT" --leader-election-namespace default \
    --consul-sync-status ignore "${flags[@]}" >>"$LC_WORK/controller.log" 2>&1 &
  LC_CONTROLLER_PID=$!
  lc_pids+=($LC_CONTROLLER_PID)
}
wait_ready() {
  local i
  for ((i = 0; i < 6000; i++)); do
    curl -sf "http://127.0.0.1:$LC_PROBE_PORT/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$LC_CONTROLLER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "bench: the controller did not become ready" >&2
  tail -20 "$LC_WORK/controller.log" >&2
  return 1
}
register_webhooks() {
  lc_register_webhook Fail || return 1
  [ "$mutating" = off ] || e2e_register_mutating "$LC_CONTROLLER_USER"
}
driver() { # mode [args...]
  local mode=$1
  shift
  /usr/bin/python3 "$top/tests/e2e/bench.py" "$mode" --url "$LC_URL" --token "$(lc_token)" --ca "$LC_WORK/tls/ca.crt" \
    --metrics "http://127.0.0.1:$LC_PROBE_PORT/metrics" --pid "$LC_CONTROLLER_PID" --server-pids "$server_pids" \
    --quiet "$quiet" --timeout "$timeout" "$@"
}

status=0
for run in "${runs[@]}"; do
  n=${run%%:*} t=${run##*:}
  lc_stop
  lc_start "$build" "$e2e_work/n$n-t$t" --compaction-window $((n * 8 + 100000)) || { bad "cluster for $n"; status=1; break; }
  server_pids=$(IFS=,; echo "${lc_pids[*]}")
  start_controller && wait_ready || { bad "controller for $n"; status=1; break; }
  if [ "$webhook" = on ]; then register_webhooks || { bad "webhook for $n"; status=1; break; }; fi
  echo "--- $n PropertyOverrides over $t targets ($server server; load $(cut -d' ' -f1-3 /proc/loadavg)) ---"
  perf_pid=
  if [ -n "${PO_BENCH_PERF:-}" ] && [ "$n" = "$largest" ] && [ "$t" = $(((n + per_target - 1) / per_target)) ] && [ -z "${perf_done:-}" ]; then
    perf_done=1
    perf record -q -e cpu-clock -F "${PO_BENCH_PERF_HZ:-999}" --call-graph "${PO_BENCH_PERF_GRAPH:-fp}" -o "$PO_BENCH_PERF" -p "$LC_CONTROLLER_PID" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  line=$(driver run --count "$n" --targets "$t" --rate "$rate" --patches "$patches" --label "$label")
  rc=$?
  [ -n "$perf_pid" ] && { kill -INT "$perf_pid"; wait "$perf_pid"; echo "perf profile: $PO_BENCH_PERF"; }
  [ -n "$line" ] && echo "$line" >>"$out"
  if [ $rc = 0 ]; then ok "$n over $t: converged"; else bad "$n over $t: not converged: $(jq -r .why <<<"$line" 2>/dev/null)"; status=1; continue; fi
  if [ $restart = 1 ]; then
    # one restart per flag set of PO_BENCH_RESTART_FLAGS (none: one with the run's flags)
    IFS=';' read -r -a restart_sets <<<"${PO_BENCH_RESTART_FLAGS:-}"
    [ ${#restart_sets[@]} = 0 ] && restart_sets=("")
    base_flags=("${flags[@]}")
    IFS=';' read -r -a restart_builds <<<"${PO_BENCH_RESTART_BUILDS:-}"
    for rbuild in "${restart_builds[@]:-}"; do
    ctl_build=$rbuild
    for rflags in "${restart_sets[@]}"; do
      old=$LC_CONTROLLER_PID
      kill -TERM "$old"
      for ((i = 0; i < 600; i++)); do kill -0 "$old" 2>/dev/null || break; sleep 0.05; done
      mark=$(wc -l <"$LC_WORK/controller.log")
      read -r -a extra <<<"$rflags"
      flags=("${base_flags[@]}" "${extra[@]}")
      start_controller
      flags=("${base_flags[@]}")
      perf_pid=
      if [ -n "${PO_BENCH_PERF_RESTART:-}" ] && [ "$n" = "$largest" ] && [ -z "${perf_restart_done:-}" ]; then
        perf_restart_done=1
        perf record -q -e cpu-clock -F "${PO_BENCH_PERF_HZ:-999}" --call-graph "${PO_BENCH_PERF_GRAPH:-fp}" -o "$PO_BENCH_PERF_RESTART" -a >/dev/null 2>&1 &
        perf_pid=$!
      fi
      wait_ready || { bad "$n over $t: the restarted controller did not become ready"; status=1; continue 3; }
      ready_at=$(date +%s.%N)
      # its webhook listens on a new port (after ready_at: nothing is created after a restart; a repair would be admitted)
      if [ "$webhook" = on ]; then register_webhooks || { bad "$n over $t: webhook after the restart"; status=1; continue 3; }; fi
      [ -n "$perf_pid" ] && { kill -INT "$perf_pid"; wait "$perf_pid"; echo "perf profile of the restart: $PO_BENCH_PERF_RESTART"; }
      line=$(driver restart --count "$n" --targets "$t" --started "$started_at" --ready "$ready_at" --label "$label${rbuild:+ $rbuild}${rflags:+ $rflags}")
      rc=$?
      early=$(tail -n +"$((mark + 1))" "$LC_WORK/controller.log" | grep -c 'before the caches synced')
      line=$(jq -c --argjson e "$early" '.unsynced_start_warned = ($e > 0)' <<<"$line")
      echo "$line" >>"$out"
      if [ $rc = 0 ]; then ok "$n over $t: restart${rbuild:+ of $rbuild}${rflags:+ ($rflags)} settled"; else bad "$n over $t: restart${rflags:+ ($rflags)}: $(jq -r .why <<<"$line")"; status=1; fi
    done
    done
    ctl_build=
  fi
done
echo
/usr/bin/python3 "$top/tests/e2e/bench_table.py" "$out"
echo "report: $out"
finish
exit $(( status || e2e_fail > 0 ))
