#!/usr/bin/env bash
# upgrade-check (issue 24) as data: each testdata/upgrade/NAME.yaml is checked with the flags of
# its `# args:` header and must exit with its `# exit:` header's status, its output (stdout and
# stderr) byte for byte NAME.out (PO_UPDATE_GOLDEN=1 rewrites them). The cases are real
# differences between the embedded go-control-plane snapshots (their headers say which), one or
# more per kind of finding; then the github and json forms, --fail-on-warning, a cluster's objects
# through stdin, and bad input (exit 2).
source "$(dirname "$0")/lib.sh"
u=$data/upgrade
for f in "$u"/*.yaml; do
  name=$(basename "$f" .yaml)
  args=$(sed -n 's/^# args: //p' "$f" | head -1)
  want=$(sed -n 's/^# exit: //p' "$f" | head -1)
  # shellcheck disable=SC2086
  "$bin" upgrade-check $args -f "$f" >"$work/$name.out" 2>&1
  golden "$name" "$want" $? "$work/$name.out" "$u/$name.out"
done

# Every kind the embedded snapshots and the meshes' facts give an instance of is found somewhere.
cat "$u"/*.out >"$work/all"
for kind in removed type-changed deprecated moved-to-extension rule-tightened resource-name-changed; do
  contains "the corpus finds $kind" "$work/all" ": $kind: "
done

"$bin" upgrade-check --from istio@1.26 --to istio@1.28 -o github -f "$u/ef-removed.yaml" >"$work/gh" 2>/dev/null
golden "github form" 1 $? "$work/gh" "$u/ef-removed.github"
"$bin" upgrade-check --from envoy-gateway@1.8 --to envoy-gateway@1.9 -o json -f "$u/epp-moved.yaml" >"$work/json" 2>/dev/null
check "json form" 1 $?
jqcheck "json: one finding per moved field, kind in code" "$work/json" \
  '[.findings[] | .code] == ["moved-to-extension", "moved-to-extension"] and .summary.invalid == 1'

"$bin" upgrade-check --from istio@1.26 --to istio@1.28 --fail-on-warning -f "$u/po-deprecated.yaml" >"$work/out" 2>&1
check "--fail-on-warning: a deprecation exits 1" 1 $?

# kubectl get ... -o yaml | upgrade-check -f -: a List through stdin, each item checked.
{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"
  for f in "$u/po-deprecated.yaml" "$u/ef-removed.yaml"; do
    grep -v '^#' "$f" | sed '1s/^/- /; 2,$s/^/  /'
  done; } >"$work/list.yaml"
"$bin" upgrade-check --from istio@1.26 --to istio@1.28 -f - <"$work/list.yaml" >"$work/out" 2>&1
check "a List through stdin" 1 $?
contains "its items are checked" "$work/out" "1 unaffected, 1 breaking, 0 skipped"

"$bin" upgrade-check --to linkerd@2.18 -f "$u/clean.yaml" >"$work/out" 2>&1
check "an unknown mesh is bad usage" 2 $?
"$bin" upgrade-check --from istio@1.26 --to envoy-gateway@1.9 -f "$u/clean.yaml" >"$work/out" 2>&1
check "two meshes are bad usage" 2 $?
contains "two meshes: said" "$work/out" "an upgrade stays in one mesh"
"$bin" upgrade-check --to istio@1.28 --to-envoy-api v1.99.0 -f "$u/clean.yaml" >"$work/out" 2>&1
check "a snapshot not embedded is bad usage" 2 $?
"$bin" upgrade-check -f "$u/clean.yaml" >"$work/out" 2>&1
check "--to is required" 2 $?
printf 'kind: PropertyOverride\nspec: [unclosed\n' >"$work/broken.yaml"
"$bin" upgrade-check --to istio@1.28 -f "$work/broken.yaml" >"$work/out" 2>&1
check "unparsable input exits 2" 2 $?
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$work/cm.yaml"
"$bin" upgrade-check --to istio@1.28 -f "$work/cm.yaml" >"$work/out" 2>&1
check "nothing checked exits 2" 2 $?
finish
