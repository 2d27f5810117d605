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
contains "its items are checked" "$work/out" "1 unaffected, 1 breaking, 0 invalid under the current release (see validate), 0 skipped"

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
# Another mesh's objects only (an Istio EnvoyFilter under --to consul@1.22): nothing checked, and
# the message says what was skipped, why and what to run, not that the file holds no EnvoyFilter.
"$bin" upgrade-check --to consul@1.22 -f "$u/ef-removed.yaml" >"$work/out" 2>&1
check "another mesh's objects only exit 2" 2 $?
contains "another mesh's objects: what was skipped and why" "$work/out" \
  "nothing checked: 1 istio object (EnvoyFilter) skipped: --to consul@1.22 checks Consul's objects only"
contains "another mesh's objects: what to run" "$work/out" 'run `upgrade-check --to istio@'
if grep -q "but no PropertyOverride" "$work/out"; then
  echo "FAIL another mesh's objects: said not to be there"; fail=$((fail+1)); else pass=$((pass+1)); fi
# ... and beside checked objects, a note says the same.
"$bin" upgrade-check --from istio@1.26 --to istio@1.28 -f "$u/po-deprecated.yaml" -f "$u/epp-moved.yaml" >"$work/out" 2>&1
check "a checked object and another mesh's" 0 $?
contains "another mesh's objects: noted beside checked ones" "$work/out" "note: 1 envoy-gateway object (EnvoyPatchPolicy) skipped"

# An object refused under --from already counts on its own (never "unaffected"), and exits 1:
# a PropertyOverride, a Consul entry, an EnvoyFilter, an EnvoyPatchPolicy.
for f in invalid-before-po invalid-before-consul invalid-before-ef invalid-before-epp; do
  args=$(sed -n 's/^# args: //p' "$u/$f.yaml" | head -1)
  # shellcheck disable=SC2086
  "$bin" upgrade-check $args -f "$u/$f.yaml" >"$work/out" 2>&1
  check "$f exits 1" 1 $?
  contains "$f: counted invalid under the current release" "$work/out" \
    "0 unaffected, 0 breaking, 1 invalid under the current release (see validate), 0 skipped"
done
"$bin" upgrade-check --from istio@1.26 --to istio@1.28 -o json -f "$u/invalid-before-po.yaml" >"$work/json" 2>/dev/null
jqcheck "json: invalid_before counted, the finding's code says it" "$work/json" \
  '.summary.invalid_before == 1 and .summary.valid == 0 and [.findings[] | .code] == ["invalid-before"]'

# --xds-name-scheme-v2 is Envoy Gateway's: refused with another mesh's --to, not ignored.
for to in istio@1.28 consul@1.22; do
  "$bin" upgrade-check --to $to --xds-name-scheme-v2 -f "$u/clean.yaml" >"$work/out" 2>&1
  check "--xds-name-scheme-v2 with --to $to is bad usage" 2 $?
  contains "--xds-name-scheme-v2 with --to $to: said" "$work/out" "--xds-name-scheme-v2 is Envoy Gateway's"
done
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$work/cm.yaml"
"$bin" upgrade-check --to istio@1.28 -f "$work/cm.yaml" >"$work/out" 2>&1
check "nothing checked exits 2" 2 $?
# one release upgraded to: a second --to is refused, not the last one kept (adv-24)
"$bin" upgrade-check --to istio@1.28 --to istio@1.30 -f "$work/cm.yaml" >"$work/out" 2>&1
check "--to twice exits 2" 2 $? "$work/out"
contains "--to twice: said so" "$work/out" "propertyoverride upgrade-check: --to is given twice: name the one release upgraded to"
for flag in "--from istio@1.26" "--from-envoy-api v1.32.4" "--to-envoy-api v1.37.0"; do
  name=${flag%% *}
  "$bin" upgrade-check --to istio@1.28 $flag $flag -f "$work/cm.yaml" >"$work/out" 2>&1
  check "$name twice exits 2" 2 $? "$work/out"
  contains "$name twice: said so" "$work/out" "propertyoverride upgrade-check: $name is given twice"
done
finish
