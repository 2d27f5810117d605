#!/usr/bin/env bash
# The audit check itself (scripts/lib/rbac-audit.py through lc_audit_rbac), held to what it
# claims: "every request the controller made". Each case takes a verb the controller does use out
# of a copy of deploy/base/rbac.yaml; the check must then fail. Run as the suites run it: the
# controller still running when finish calls lc_audit_rbac.
#   - watch: the informers' watches are long-running requests, which complete only when they end
#     (their timeoutSeconds, 300-600 s later, after every suite's finish). With ResponseStarted
#     omitted from the audit policy no watch was ever checked; lc_start's policy keeps it.
#   - rotation: kube-apiserver rotates its audit log at --audit-log-maxsize (100 MB by default)
#     into audit-<time>.log, which lc_audit_rbac now reads too. Forced here at 1 MB: a request of
#     the controller's made before the rotation must still be seen.
#   t_rbac_audit_oracle.sh BUILD_DIR        (PO_APISERVER=real only)
. "$(dirname "$0")/lib.sh"
build=$1
[ "$LC_KIND" = real ] || { echo "real API server only"; exit 77; }
[ "${LC_AUDIT:-0}" = 1 ] || { echo "needs LC_AUDIT=1 (lib.sh's default on the real server)"; exit 77; }
lc_start "$build" "$e2e_work" --audit-log-maxsize 1 || exit 1
lc_controller --istio off --envoy-gateway off || exit 1

# oracle_without LABEL APIGROUP RESOURCE VERB: lc_audit_rbac over a copy of deploy/ whose rule for
# RESOURCE lacks VERB; succeeds when the oracle fails (it saw the request).
oracle_without() {
  local fake=$e2e_work/top-$1
  mkdir -p "$fake/scripts/lib" "$fake/deploy/base"
  ln -sf "$top/scripts/lib/rbac-audit.py" "$fake/scripts/lib/rbac-audit.py"
  /usr/bin/python3 - "$top/deploy/base/rbac.yaml" "$fake/deploy/base/rbac.yaml" "$2" "$3" "$4" <<'EOF'
import sys, yaml
src, dst, group, resource, verb = sys.argv[1:]
docs = list(yaml.safe_load_all(open(src)))
for d in docs:
    for r in (d or {}).get("rules") or []:
        if group in r.get("apiGroups", []) and resource in r.get("resources", []):
            r["verbs"] = [v for v in r["verbs"] if v != verb]
yaml.safe_dump_all(docs, open(dst, "w"))
EOF
  local out
  out=$(LC_TOP=$fake lc_audit_rbac 2>&1)
  local rc=$?
  echo "$out" | sed "s/^/  [$1] /" | cut -c1-300
  [ $rc != 0 ] && grep -q "$4 $3" <<<"$out"
}

# --- rotation: one request under the controller's User-Agent, then more than 1 MB of others ------
# (DELETE of an EnvoyFilter: deploy/ allows it, and this controller, --istio off, never sends one.)
ua="propertyoverride/$("$build/propertyoverride" version 2>/dev/null | head -1 | awk '{print $NF}')"
curl -s -o /dev/null --cacert "$LC_WORK/tls/ca.crt" -H "Authorization: Bearer $LC_TOKEN" -A "$ua" -X DELETE \
  "$LC_URL/apis/networking.istio.io/v1alpha3/namespaces/default/envoyfilters/adv24-probe"
grep -q '"adv24-probe"\|envoyfilters/adv24-probe' "$LC_WORK/audit.log" && ok "the probe request is in audit.log" || bad "the probe request is not in audit.log"
urls=()
for i in $(seq 1 400); do urls+=("$LC_URL/api/v1/namespaces/default?n=$i"); done
for round in 1 2 3 4; do
  curl -s --cacert "$LC_WORK/tls/ca.crt" -H "Authorization: Bearer $LC_TOKEN" "${urls[@]}" >/dev/null
done
rotated=$(ls "$LC_WORK"/audit-*.log 2>/dev/null | wc -l)
check "the API server rotated its audit log ($rotated backups)" test "$rotated" -gt 0
check "the oracle sees the controller's request made before the rotation (delete envoyfilters)" \
  oracle_without rotation networking.istio.io envoyfilters delete

# --- watch: the controller's informers, still watching ---------------------------------------------
kubectl apply -f examples/consul/ >/dev/null
kubectl apply -f examples/valid/connect-timeout.yaml >/dev/null
check "programmed" kubectl wait --for=condition=Programmed propertyoverride/api-connect-timeout --timeout=30s
check "the oracle sees the controller's watch of PropertyOverrides" \
  oracle_without watch propertyoverride.io propertyoverrides watch
check "the oracle sees the controller's watch of ServiceDefaults" \
  oracle_without watch-sd consul.hashicorp.com servicedefaults watch
finish
