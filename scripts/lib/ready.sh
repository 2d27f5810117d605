# Readiness waits shared by both test harnesses (local-cluster.sh sources this file, and
# real-cluster.sh sources local-cluster.sh): what a suite must wait for after it creates a CRD or
# registers a webhook, before it uses them the way a user does.
#
# Why: the real kube-apiserver makes a new CRD usable in steps, each some time after the one
# before: Established (the resource is served), then its discovery document, then its OpenAPI v3
# document (aggregated asynchronously; `kubectl explain` says "couldn't find resource" until
# then). A new webhook configuration is read by the API server's informer, so the first writes
# after it is created can still pass unexamined. The local API server does each of these at once,
# so the same waits cost it one look each.
#
#   lc_crds_ready [--timeout S] [CRD...]   Established, listed by discovery, and described to
#                                          `kubectl explain` (the OpenAPI v3 document, through
#                                          kubectl's cache) for every served version; without
#                                          names, every CRD of the cluster. Prints why and returns 1
#                                          when a CRD is not ready in time (default 60 s).
#   lc_webhook_ready [--timeout S] [PORT]  the API server calls validate.propertyoverride.io: a
#                                          server-side dry run of an invalid PropertyOverride is
#                                          denied by it, or (with PORT) fails calling it at
#                                          127.0.0.1:PORT (a controller not started yet). Default
#                                          timeout 30 s.
#   lc_webhook_gone [--timeout S]          the API server no longer calls it: the same dry run is
#                                          admitted (after the configuration is deleted).
#
# Both need kubectl (KUBECONFIG set by lc_start) and jq.

# One look at one CRD; sets LC_READY_WHY to what is still missing.
lc_crd_ready_once() { # crd name
  local crd=$1 json group kind plural established versions v doc out
  json=$(kubectl get crd "$crd" -o json 2>&1) || { LC_READY_WHY="kubectl get crd $crd: $json"; return 1; }
  IFS=$'\t' read -r group kind plural established versions < <(jq -r '[
      .spec.group, .spec.names.kind, .spec.names.plural,
      (first((.status.conditions // [])[] | select(.type == "Established") | .status) // "Unknown"),
      ([.spec.versions[] | select(.served) | .name] | join(","))] | @tsv' <<<"$json")
  [ "$established" = True ] || { LC_READY_WHY="$crd is not Established ($established)"; return 1; }
  for v in ${versions//,/ }; do
    doc=$(kubectl get --raw "/apis/$group/$v" 2>&1) &&
      jq -e --arg p "$plural" 'any(.resources[]?; .name == $p)' >/dev/null <<<"$doc" ||
      { LC_READY_WHY="discovery /apis/$group/$v does not list $plural yet"; return 1; }
    # The OpenAPI document as kubectl itself reads it. Not the document fetched by hand: the real
    # server's /openapi/v3 root names each document by a hash of its content and serves any other
    # hash as a redirect to the current one, so a fetch by hand sees the new document while the
    # root still names the old hash, which kubectl has cached as immutable (measured: explain
    # failed 4 times in 20 right after the document fetched by hand described the kind).
    out=$(kubectl explain "$plural" --api-version "$group/$v" 2>&1) ||
      { LC_READY_WHY="kubectl explain $plural --api-version $group/$v: $(head -1 <<<"$out")"; return 1; }
  done
}

lc_crds_ready() { # [--timeout S] [crd...]
  local timeout=60 crd names=()
  [ "${1:-}" = --timeout ] && { timeout=$2; shift 2; }
  names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(kubectl get crd -o name | sed 's,^.*/,,')
  local end=$((SECONDS + timeout))
  for crd in "${names[@]}"; do
    crd=${crd#crd/}
    crd=${crd#customresourcedefinition.apiextensions.k8s.io/}
    until lc_crd_ready_once "$crd"; do
      if [ "$SECONDS" -ge "$end" ]; then
        echo "lc_crds_ready: not ready within ${timeout} s: $LC_READY_WHY" >&2
        return 1
      fi
      sleep 0.2
    done
  done
}

# One server-side dry run of a PropertyOverride only the webhook refuses (an unknown field, which the
# CRD's schema lets through); prints the API server's answer.
lc_webhook_probe() {
  kubectl create --dry-run=server -f - 2>&1 <<'YAML'
apiVersion: propertyoverride.io/v1alpha1
kind: PropertyOverride
metadata: {name: lc-webhook-ready-probe, namespace: default}
spec:
  targetRef: {name: lc-webhook-ready-probe}
  patches:
    - resourceFilter: {resourceType: cluster, trafficDirection: outbound}
      op: add
      path: /lc_webhook_ready_probe
      value: 1
YAML
}

lc_webhook_ready() { # [--timeout S] [port]
  local timeout=30
  [ "${1:-}" = --timeout ] && { timeout=$2; shift 2; }
  local port=${1:-none} end=$((SECONDS + timeout)) out
  while :; do
    out=$(lc_webhook_probe)
    case $out in
    *'admission webhook "validate.propertyoverride.io" denied the request'*) return 0 ;;
    *'failed calling webhook "validate.propertyoverride.io"'*"127.0.0.1:$port/"*) [ "$port" != none ] && return 0 ;;
    esac
    if [ "$SECONDS" -ge "$end" ]; then
      echo "lc_webhook_ready: the API server does not call validate.propertyoverride.io${1:+ at 127.0.0.1:$port} within ${timeout} s; last answer: $out" >&2
      return 1
    fi
    sleep 0.2
  done
}

lc_webhook_gone() { # [--timeout S]
  local timeout=30
  [ "${1:-}" = --timeout ] && { timeout=$2; shift 2; }
  local end=$((SECONDS + timeout)) out
  while :; do
    out=$(lc_webhook_probe)
    case $out in *'created (server dry run)'*) return 0 ;; esac
    if [ "$SECONDS" -ge "$end" ]; then
      echo "lc_webhook_gone: the API server still calls validate.propertyoverride.io after ${timeout} s; last answer: $out" >&2
      return 1
    fi
    sleep 0.2
  done
}
