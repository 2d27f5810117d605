#!/usr/bin/env bash
# Builds the Envoy v3 descriptor set the library embeds (ARCHITECTURE.md section 6).
#   gen_descriptor.sh PROTOC ENVOY_API_DIR PROTO_INCLUDE_DIR OUT.pb OUT.files
# ENVOY_API_DIR has the grpc-js-xds deps/ layout: envoy-api/ xds/ googleapis/ protoc-gen-validate/.
# Every envoy/**/v3/*.proto that compiles with the imports at hand goes in (so any @type inside
# an Any resolves); the few that import protos not shipped (opencensus, opentelemetry) are left
# out and listed in OUT.files. validate.proto gets the one field its envoy-api needs.
set -euo pipefail
protoc=$1 api=$2 wkt=$3 out=$4 list=$5
work=$(dirname "$out")/validate-patched
mkdir -p "$work/validate"
src="$api/protoc-gen-validate/validate/validate.proto"
[ -f "$src" ] || { echo "gen_descriptor: $src not found (PO_ENVOY_API_DIR=$api)" >&2; exit 1; }
if grep -q 'ignore_empty' "$src"; then
  cp "$src" "$work/validate/validate.proto"
else
  # StringRules.ignore_empty = 26 (used by envoy-api, newer than this validate.proto).
  awk '{print} /optional bool strict = 25 \[default = true\];/ && !done {
         print ""; print "  // Added by the propertyoverride build; the envoy-api copy uses it.";
         print "  optional bool ignore_empty = 26;"; done=1 }' "$src" > "$work/validate/validate.proto"
  grep -q 'ignore_empty = 26' "$work/validate/validate.proto" ||
    { echo "gen_descriptor: could not add StringRules.ignore_empty to validate.proto" >&2; exit 1; }
fi
inc=(-I"$work" -I"$api/envoy-api" -I"$api/xds" -I"$api/googleapis" -I"$api/protoc-gen-validate" -I"$wkt")
ok=() skipped=()
while IFS= read -r f; do
  if "$protoc" "${inc[@]}" --descriptor_set_out=/dev/null "$f" 2>/dev/null; then ok+=("$f"); else skipped+=("$f"); fi
done < <(cd "$api/envoy-api" && find envoy -name '*.proto' -path '*/v3/*' | LC_ALL=C sort)
[ ${#ok[@]} -gt 0 ] || { echo "gen_descriptor: no Envoy v3 protos compiled" >&2; exit 1; }
"$protoc" "${inc[@]}" --include_imports --descriptor_set_out="$out" "${ok[@]}"
{ printf '# compiled: %d\n' ${#ok[@]}; printf '%s\n' "${ok[@]}";
  printf '# left out (imports not shipped): %d\n' ${#skipped[@]}; printf '%s\n' "${skipped[@]}"; } > "$list"
