# The same "cluster" as scripts/lib/local-cluster.sh, on the real kube-apiserver and etcd that
# scripts/build-kube.sh builds into .deps/bin (docs/real-apiserver.md). Same functions, same
# variables, so a test picks one with a switch:
#   case ${PO_APISERVER:-local} in real) . scripts/lib/real-cluster.sh ;; *) . scripts/lib/local-cluster.sh ;; esac
# Source it, then:
#   lc_start BUILD_DIR WORK_DIR [extra flags...]   etcd + kube-apiserver on 127.0.0.1 over TLS; sets
#                                                  LC_URL, KUBECONFIG; CRDs installed with kubectl
#                                                  unless LC_NO_CRDS=1
#   lc_controller [extra controller flags...]      starts it, waits until ready (as local-cluster.sh)
#   lc_register_webhook [failurePolicy]            the ValidatingWebhookConfiguration (as local-cluster.sh)
#   lc_stop                                        stops everything, newest first (trap-safe)
#   lc_have_real                                   true when the binaries are built (tests skip otherwise)
#   lc_real_missing                                exit 77 (skipped), or 1 under PO_REQUIRE_REAL=1
#   lc_audit_rbac                                  under LC_AUDIT=1: every request the controller
#                                                  made, from the API server's audit log, checked
#                                                  against deploy/'s RBAC (rbac-audit.py)
#   lc_audit_refused WORK, lc_audit_count WORK     the controller's refused (403) requests, and
#                                                  how many it made, from WORK's audit logs
#   lc_audit_answered WORK CODE [VERB]             its requests answered CODE (of VERB)
# Files, as the local server writes them: $LC_WORK/tls/{ca.crt,tls.crt,tls.key,kubeconfig}
# (tls.crt is valid for 127.0.0.1, ::1 and localhost: the webhook serves with it), and the logs
# $LC_WORK/{etcd,apiserver,controller}.log. LC_START_SECONDS is how long lc_start took.
#
# Extra flags of lc_start are kube-apiserver flags, except the local server's own: --token T adds
# a token (admin, like the kubeconfig's), --tls-san DNS adds a name to the certificate, the
# tuning flags --bookmark-interval-ms and --log-level are ignored (the real server has its own),
# --compaction-window N (keep N revisions) becomes --etcd-compaction-interval 0 (the API server
# never compacts: a test that asks for a long history gets all of it),
# --webhook-service NS/NAME=HOST:PORT (as the local server's: webhooks that name that Service
# reach HOST:PORT) is done with the API server's egress selector and a CONNECT proxy
# (real-cluster-proxy.py), and the local-only features (--fault-*, --state,
# --webhook-host-override, --crd) make lc_start fail with a message: fault injection and
# persistence are local-server features.

# lc_controller, lc_register_webhook and lc_wait_file are the local harness's own: they only
# use the kubeconfig and the files above. lc_start, lc_free_port and lc_stop are redefined below.
. "$(dirname "${BASH_SOURCE[0]}")/local-cluster.sh"

LC_KIND=real
lc_pids=()
lc_audit_logs=()

lc_real_bin() {
  local top
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  echo "${PO_KUBE_BIN:-${PO_DEPS_DIR:-$top/.deps}/bin}"
}

lc_have_real() { [ -x "$(lc_real_bin)/kube-apiserver" ] && [ -x "$(lc_real_bin)/etcd" ]; }

# A test that needs the real binaries and finds none: skipped (exit 77), unless PO_REQUIRE_REAL=1
# (CI sets it) makes that a failure, so a green run cannot hide that nothing ran on the real server.
lc_real_missing() {
  if [ "${PO_REQUIRE_REAL:-0}" = 1 ]; then
    echo "FAIL: no kube-apiserver/etcd in $(lc_real_bin), and PO_REQUIRE_REAL=1: run scripts/build-kube.sh (make setup does) and look at its error" >&2
    exit 1
  fi
  echo "skipped: no kube-apiserver and etcd in $(lc_real_bin) (scripts/build-kube.sh builds them; PO_REQUIRE_REAL=1 makes this a failure)"
  exit 77
}

# The pinned versions as scripts/build-kube.sh writes them at the start of its stamp
# ("kube-apiserver vX etcd vY"), read from the same go.mod files.
lc_real_pins() {
  local top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  printf 'kube-apiserver %s etcd %s' \
    "$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$top/scripts/kube/apiserver/go.mod")" \
    "$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$top/scripts/kube/etcd/go.mod")"
}

# Binaries of other pins (a pin changed and build-kube.sh could not rebuild, e.g. offline) are not
# the server these tests claim to run on: say so instead of running on them. Binaries without a
# stamp (PO_KUBE_BIN pointing at one's own build) are taken as they are.
lc_real_check_pins() {
  local stamp pins
  stamp="$(lc_real_bin)/.kube-stamp"
  [ -f "$stamp" ] || return 0
  pins=$(lc_real_pins)
  case "$(cat "$stamp")" in "$pins "*) return 0 ;; esac
  lc_real_die "$(lc_real_bin) holds '$(cut -d' ' -f1-4 "$stamp")' but the pins (scripts/kube/*/go.mod) say '$pins': run scripts/build-kube.sh"
}

# A free loopback port without python: a random port below the kernel's ephemeral range (where
# no outgoing connection takes one) on which nothing accepts a connection. Ports handed out are
# remembered in the work folder so two calls in one test never return the same port.
lc_free_port() {
  # Before lc_start (a test that needs a port for its own server first) the list is this shell's
  # own file ($$ is the test's shell, also inside $(...)); lc_start carries it into the work folder.
  local lo=32768 p i given=${LC_WORK:+$LC_WORK/.lc-ports}
  given=${given:-${TMPDIR:-/tmp}/.lc-ports.$$}
  [ -r /proc/sys/net/ipv4/ip_local_port_range ] && read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$lo" -gt 12000 ] || lo=32768
  for ((i = 0; i < 500; i++)); do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % (lo - 10000)))
    grep -qx "$p" "$given" 2>/dev/null && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p" >>"$given" 2>/dev/null
      echo "$p"
      return 0
    fi
  done
  echo "real-cluster: no free port found" >&2
  return 1
}

lc_real_die() { echo "real-cluster: $*" >&2; return 1; }

# CA, serving certificate (ECDSA P-256, as the local server's), service-account key pair, token.
lc_real_certs() { # tls dir, extra DNS names...
  local d=$1 san="IP:127.0.0.1,IP:::1,DNS:localhost" n
  shift
  for n in "$@"; do san="$san,DNS:$n"; done
  mkdir -p "$d"
  (
    set -e
    cd "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 7 \
      -subj /CN=propertyoverride-real-apiserver-ca -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls.key -out tls.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' \
      "$san" >tls.ext
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -days 7 -extfile tls.ext
    openssl ecparam -name prime256v1 -genkey -noout -out sa.key
    openssl ec -in sa.key -pubout -out sa.pub
    rm -f tls.csr tls.ext ca.srl
  ) >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; lc_real_die "cannot make certificates in $d"; }
}

lc_real_token() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

lc_real_kubeconfig() { # file url ca token
  cat >"$1.tmp" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: kube-apiserver
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 <"$3")
users:
- name: admin
  user:
    token: $4
contexts:
- name: kube-apiserver
  context:
    cluster: kube-apiserver
    user: admin
    namespace: default
current-context: kube-apiserver
YAML
  mv "$1.tmp" "$1"
}

# Polls a command until it succeeds, while a process lives (seconds).
lc_real_until() { # timeout pid what command...
  local t=$1 pid=$2 what=$3 i
  shift 3
  for ((i = 0; i < t * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || return 2
    sleep 0.1
  done
  echo "real-cluster: $what not ready within $t s" >&2
  return 1
}

lc_real_etcd() { # starts etcd on two free ports; sets LC_ETCD_URL
  local bin=$1 try client peer rc
  for try in 1 2 3; do
    client=$(lc_free_port) && peer=$(lc_free_port) || return 1
    rm -rf "$LC_WORK/etcd"
    # --unsafe-no-fsync: a test store need not survive a power cut, and fsync on a busy shared
    # disk is what makes etcd slow; the data dir goes with the work folder.
    "$bin/etcd" --name po-test --data-dir "$LC_WORK/etcd" \
      --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
      --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
      --initial-cluster "po-test=http://127.0.0.1:$peer" \
      --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn \
      >>"$LC_WORK/etcd.log" 2>&1 &
    local pid=$!
    lc_pids+=($pid)
    lc_real_until 60 "$pid" "etcd on 127.0.0.1:$client" \
      sh -c "curl -sf http://127.0.0.1:$client/health | grep -q '\"health\":\"true\"'"
    rc=$?
    [ $rc = 0 ] && { LC_ETCD_URL="http://127.0.0.1:$client"; return 0; }
    [ $rc = 2 ] || break # alive but not ready: no point in another port
    echo "real-cluster: etcd exited (port taken?), retrying" >&2
  done
  tail -20 "$LC_WORK/etcd.log" >&2
  return 1
}

lc_real_apiserver() { # bin, extra flags...; sets LC_URL
  local bin=$1 try port rc pid
  shift
  for try in 1 2 3; do
    port=$(lc_free_port) || return 1
    # Admission: no --enable-admission-plugins, so exactly the plugins Kubernetes enables by
    # default (ValidatingAdmissionPolicy and ValidatingAdmissionWebhook with matchConditions
    # among them: both GA and on in 1.32). No kube-controller-manager runs: see
    # docs/real-apiserver.md for what that leaves out (garbage collection, namespace deletion).
    "$bin/kube-apiserver" \
      --etcd-servers "$LC_ETCD_URL" --etcd-prefix /registry \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
      --cert-dir "$LC_WORK/apiserver-certs" \
      --tls-cert-file "$LC_WORK/tls/tls.crt" --tls-private-key-file "$LC_WORK/tls/tls.key" \
      --client-ca-file "$LC_WORK/tls/ca.crt" --token-auth-file "$LC_WORK/tls/tokens.csv" \
      --service-account-issuer https://kubernetes.default.svc.cluster.local \
      --service-account-key-file "$LC_WORK/tls/sa.pub" --service-account-signing-key-file "$LC_WORK/tls/sa.key" \
      --service-cluster-ip-range 10.96.0.0/16 --authorization-mode RBAC \
      --endpoint-reconciler-type none --profiling=false --v 1 \
      "$@" >>"$LC_WORK/apiserver.log" 2>&1 &
    pid=$!
    lc_pids+=($pid)
    lc_real_until 120 "$pid" "kube-apiserver on 127.0.0.1:$port" \
      curl -sf --cacert "$LC_WORK/tls/ca.crt" -H "Authorization: Bearer $LC_TOKEN" "https://127.0.0.1:$port/readyz"
    rc=$?
    [ $rc = 0 ] && { LC_URL="https://127.0.0.1:$port"; return 0; }
    [ $rc = 2 ] || break
    grep -q 'address already in use' "$LC_WORK/apiserver.log" || break
    echo "real-cluster: kube-apiserver: port $port taken, retrying" >&2
  done
  tail -30 "$LC_WORK/apiserver.log" >&2
  return 1
}

lc_start() {
  LC_BUILD=$(cd "$1" && pwd)
  LC_WORK=$2
  shift 2
  LC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  local bin t0 t1 sans=() tokens=() flags=() services=()
  bin=$(lc_real_bin)
  lc_have_real || lc_real_die "no kube-apiserver and etcd in $bin: run scripts/build-kube.sh (or set PO_KUBE_BIN)" || return 1
  lc_real_check_pins || return 1
  command -v openssl >/dev/null && command -v curl >/dev/null && command -v kubectl >/dev/null ||
    lc_real_die "openssl, curl and kubectl are needed" || return 1
  while [ $# -gt 0 ]; do
    case $1 in
    --token) tokens+=("$2"); shift 2 ;;
    --tls-san) sans+=("$2"); shift 2 ;;
    --compaction-window) flags+=(--etcd-compaction-interval 0); shift 2 ;;
    --bookmark-interval-ms | --log-level) shift 2 ;;
    --webhook-service) services+=("$2"); shift 2 ;;
    --fault-* | --state | --webhook-host-override | --crd | --listen | --tls-dir | --ready-file | --kubeconfig)
      lc_real_die "$1 is a local API server flag (tests/apiserver) with no counterpart on the real one: run this test with PO_APISERVER=local"
      return 1 ;;
    *) flags+=("$1"); shift ;;
    esac
  done
  t0=$(date +%s.%N)
  mkdir -p "$LC_WORK"
  lc_real_sweep
  echo $$ >"$LC_WORK/.owner"
  cat "${TMPDIR:-/tmp}/.lc-ports.$$" >"$LC_WORK/.lc-ports" 2>/dev/null || : >"$LC_WORK/.lc-ports"
  rm -f "${TMPDIR:-/tmp}/.lc-ports.$$"
  lc_real_certs "$LC_WORK/tls" "${sans[@]}" || return 1
  LC_TOKEN=$(lc_real_token)
  local controller_token
  controller_token=$(lc_real_token)
  {
    # system:masters: the tests and the controller act as cluster admin, as with the local server.
    printf '%s,admin,uid-admin,"system:masters"\n' "$LC_TOKEN"
    # the same rights under the controller's deployed username (LC_CONTROLLER_KUBECONFIG)
    printf '%s,%s,uid-controller,"system:masters"\n' "$controller_token" "$LC_CONTROLLER_USER"
    local t
    for t in "${tokens[@]}"; do printf '%s,admin-%s,uid-admin-%s,"system:masters"\n' "$t" "${t:0:6}" "${t:0:6}"; done
  } >"$LC_WORK/tls/tokens.csv"
  lc_real_etcd "$bin" || return 1
  if [ ${#services[@]} -gt 0 ]; then
    # Webhooks that name a Service: the API server dials its cluster IP through the "cluster"
    # egress (an HTTP CONNECT proxy on a Unix socket), which tunnels to the mapped address.
    cat >"$LC_WORK/egress.yaml" <<YAML
apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: $LC_WORK/egress.sock
YAML
    flags+=(--egress-selector-config-file "$LC_WORK/egress.yaml")
  fi
  if [ "${LC_AUDIT:-0}" = 1 ]; then
    # Metadata of every request: who, which verb on what. The suites run the controller as an
    # admin; lc_audit_rbac holds its requests to deploy/'s RBAC. At ResponseComplete, and for a
    # long-running request (a watch) also at ResponseStarted: it completes only when it ends,
    # minutes after the suite's finish. (rbac-audit.py counts each request once, by auditID.)
    cat >"$LC_WORK/audit-policy.yaml" <<YAML
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
YAML
    flags+=(--audit-policy-file "$LC_WORK/audit-policy.yaml" --audit-log-path "$LC_WORK/audit.log"
      --audit-log-format json --audit-log-maxbackup 0)
    lc_audit_logs+=("$LC_WORK/audit.log")
  fi
  lc_real_apiserver "$bin" "${flags[@]}" || return 1
  local api_pid=${lc_pids[-1]}
  if [ ${#services[@]} -gt 0 ]; then
    local maps=() s
    for s in "${services[@]}"; do maps+=(--map "$s"); done
    /usr/bin/python3 "$LC_TOP/scripts/lib/real-cluster-proxy.py" --socket "$LC_WORK/egress.sock" --url "$LC_URL" \
      --token "$LC_TOKEN" --ca "$LC_WORK/tls/ca.crt" "${maps[@]}" >>"$LC_WORK/egress-proxy.log" 2>&1 &
    lc_pids+=($!)
    lc_real_until 30 "${lc_pids[-1]}" "the egress proxy" test -S "$LC_WORK/egress.sock" || return 1
  fi
  export KUBECONFIG="$LC_WORK/tls/kubeconfig"
  # kubectl's discovery cache is keyed by host:port; ports are reused across runs.
  export KUBECACHEDIR="$LC_WORK/kube-cache"
  lc_real_kubeconfig "$KUBECONFIG" "$LC_URL" "$LC_WORK/tls/ca.crt" "$LC_TOKEN"
  LC_CONTROLLER_KUBECONFIG="$LC_WORK/tls/controller.kubeconfig"
  lc_real_kubeconfig "$LC_CONTROLLER_KUBECONFIG" "$LC_URL" "$LC_WORK/tls/ca.crt" "$controller_token"
  # The bootstrap controller creates the default namespace shortly after /readyz.
  lc_real_until 60 "$api_pid" "namespace default" kubectl get namespace default || return 1
  if [ "${LC_NO_CRDS:-0}" != 1 ]; then
    # As a user installs them: kubectl apply, then wait until they are served, in discovery and
    # in the OpenAPI document (lc_crds_ready).
    kubectl apply -k "$LC_TOP/crds/" >"$LC_WORK/crds.log" 2>&1 &&
      kubectl apply -f "$LC_TOP/crds/consul/" >>"$LC_WORK/crds.log" 2>&1 &&
      kubectl wait --for=condition=Established crd --all --timeout=60s >>"$LC_WORK/crds.log" 2>&1 &&
      lc_crds_ready 2>>"$LC_WORK/crds.log" ||
      { cat "$LC_WORK/crds.log" >&2; lc_real_die "installing crds/ failed"; return 1; }
  fi
  t1=$(date +%s.%N)
  LC_START_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  echo "real-cluster: kube-apiserver $LC_URL (etcd $LC_ETCD_URL) ready in $LC_START_SECONDS s" >>"$LC_WORK/start.log"
}

# Prints rbac-audit.py's verdict over every audit log of this run; fails when the controller made
# a request deploy/'s roles do not allow. Nothing to check (LC_AUDIT unset, no server started):
# succeeds silently.
lc_audit_rbac() {
  [ ${#lc_audit_logs[@]} -gt 0 ] || return 0
  local logs=() l r none_ok=(--none-ok)
  # with the files the server rotated it into (audit-<time>.log, at --audit-log-maxsize)
  for l in "${lc_audit_logs[@]}"; do
    for r in "${l%.log}"-*.log; do [ -s "$r" ] && logs+=("$r"); done
    [ -s "$l" ] && logs+=("$l")
    [ -e "$(dirname "$l")/controller.log" ] && none_ok=() # lc_controller ran here
  done
  [ ${#logs[@]} -gt 0 ] || { echo "rbac-audit: the audit log is empty (${lc_audit_logs[*]})"; return 1; }
  /usr/bin/python3 "$LC_TOP/scripts/lib/rbac-audit.py" "${none_ok[@]}" "$LC_TOP/deploy/base/rbac.yaml" "${logs[@]}"
}

# The controller's requests the API server refused (403), from the audit logs of WORK_DIR (a
# cluster's LC_WORK; rotated ones too): "COUNT VERB RESOURCE in NAMESPACE" on one line, empty when
# none. The real authorizer's word, namespaces and resourceNames included: for the suites that run
# the controller under deploy/'s or the chart's RBAC rather than as an admin.
lc_audit_refused() { # WORK_DIR
  lc_audit_answered "$1" 403
}
# The controller's requests the audit logs of WORK_DIR hold answered CODE (of VERB, when given),
# counted by verb, resource and namespace; nothing when none.
lc_audit_answered() { # WORK_DIR CODE [VERB]
  cat "$1"/audit*.log 2>/dev/null | jq -r --argjson code "$2" --arg verb "${3:-}" \
    'select((.userAgent // "") | startswith("propertyoverride/")) |
    select(.responseStatus.code == $code and ($verb == "" or .verb == $verb)) |
    "\(.verb) \(.objectRef.resource // .requestURI) in \(.objectRef.namespace // "every namespace")"' |
    sort | uniq -c | tr -s ' \n' ' '
}
# How many requests of the controller's the audit logs of WORK_DIR hold (a watch once).
lc_audit_count() { # WORK_DIR
  cat "$1"/audit*.log 2>/dev/null | jq -r 'select((.userAgent // "") | startswith("propertyoverride/")) | .auditID' |
    sort -u | wc -l
}

# etcd's data (64-120 MB a run) is no help in reading a failure, which keeps its work folder for
# the logs: lc_stop deletes it, and a run killed before its trap ran (ctest's timeout sends
# SIGKILL) leaves it behind only until the next lc_start removes it, its owner being gone.
lc_real_sweep() {
  local d owner
  for d in "${TMPDIR:-/tmp}"/po-*/; do
    [ -d "${d}etcd" ] && [ -f "${d}.owner" ] || continue
    owner=$(cat "${d}.owner" 2>/dev/null)
    [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null && continue
    rm -rf "${d}etcd"
  done
}

lc_stop() { # newest first: controllers, then kube-apiserver, then etcd
  local i p j
  for ((i = ${#lc_pids[@]} - 1; i >= 0; i--)); do
    p=${lc_pids[i]}
    kill -TERM "$p" 2>/dev/null || continue
    for ((j = 0; j < 100; j++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
  done
  lc_pids=()
  [ -n "${LC_WORK:-}" ] && rm -rf "$LC_WORK/etcd"
}
