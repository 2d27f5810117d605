#!/usr/bin/env bash
# adv-25: validate --consul-arguments against what Consul's Constructor (mapstructure v1.5.0,
# HookWeakDecodeFromSlice then HookTranslateKeys, WeaklyTypedInput) does, wire convention.
# Facts checked against mapstructure v1.5.0 run with Consul's decoder configuration and struct
# shapes (property_override.go): see the adv-25 report.
#   t_adv25_consul_decode.sh BIN
set -u
. "$(dirname "$0")/lib.sh"
rf='"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"}'

# stderr alone: Consul's text exactly (stdout names the Envoy API that judged it)
run() { printf '%s\n' "$1" >"$work/args.json"; "$bin" validate --consul-arguments "$work/args.json" >"$work/stdout" 2>"$work/out"; }

# 1. propertyOverride embeds extensioncommon.BasicExtensionAdapter without squash: mapstructure
#    decodes it as a field named BasicExtensionAdapter (an empty struct), matched
#    case-insensitively like every other field. A non-map value is a decode error in Consul.
run "{\"basicExtensionAdapter\":\"x\",\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":\"/name\"}]}"
check embedded_adapter_string 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'BasicExtensionAdapter' expected a map, got 'string'"
run "{\"BasicExtensionAdapter\":[1,2],\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":\"/name\"}]}"
check embedded_adapter_slice 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'BasicExtensionAdapter' expected a map, got 'slice'"
# an object (any keys) decodes into the empty struct: accepted, as Consul accepts it
run "{\"BasicExtensionAdapter\":{\"a\":1},\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":\"/circuit_breakers\"}]}"
check embedded_adapter_map 0 $?

# 2. Go's %v of a float64 (every JSON number under the wire convention) is strconv 'g' with the
#    shortest digits: exponent form from 1e+06 up (and below 1e-04). mapstructure prints the
#    value so in "unconvertible type" errors.
run "{\"Patches\":[{$rf,\"Op\":{\"a\":1000000,\"b\":123456789012},\"Path\":\"/name\"}]}"
check float_v_in_map 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'Patches[0].Op' expected type 'propertyoverride.Op', got unconvertible type 'map[string]interface {}', value: 'map[a:1e+06 b:1.23456789012e+11]'"
run "{\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":[9007199254740992,2]}]}"
check float_v_in_list 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'Patches[0].Path' expected type 'string', got unconvertible type '[]interface {}', value: '[9.007199254740992e+15 2]'"

# 3. [null] where one value is expected: HookWeakDecodeFromSlice unwraps it to nil, and
#    ComposeDecodeHookFunc then calls the next hook with reflect.ValueOf(nil), whose Type()
#    panics ("reflect: call of reflect.Value.Type on zero Value"): Consul's Constructor never
#    returns. Accepting such arguments as valid says Consul takes what it cannot decode.
for f in '"Debug":[null]' '"ProxyType":[null]' '"proxytype":[null]'; do
  run "{$f,\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":\"/name\"}]}"
  rc=$?; n=${f%%:*}; n=${n//\"/}; [ $rc != 0 ]; check "null_unwrapped_$n (exit $rc)" 0 $?
done
run "{\"Patches\":[{$rf,\"Op\":\"remove\",\"Path\":\"/name\",\"Value\":[null]}]}"
rc=$?; [ $rc != 0 ]; check "null_unwrapped_Value (exit $rc)" 0 $?

# 5. Services is []*ServiceName: mapstructure's decodePtr decodes the element again into the
#    struct through d.decode, so the hooks run twice and a Services entry is unwrapped from two
#    levels of one-element lists (the pointer, then the struct). Consul accepts [[{...}]].
run '{"Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound","Services":[[[{"Name":"db"}]]]},"Op":"remove","Path":"/circuit_breakers"}]}'
check services_two_unwraps 0 $? "$work/out" ""
run '{"Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound","Services":[[[-1]]]},"Op":"remove","Path":"/name"}]}'
check services_two_unwraps_scalar 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'Patches[0].ResourceFilter.Services[0]' expected a map, got 'float64'"

# 6. An enum number beyond int32 whose low 32 bits name a value (4294967297 -> 1, MODIFY_ONLY):
#    Consul's EnumNumber(int32(n)) sets MODIFY_ONLY; ours refuses with its range error (section 5
#    of docs/consul-semantics.md says so), but the hint then says the low 32 bits, 1, "name no
#    value", which is untrue: 1 is Listener.DrainType MODIFY_ONLY.
printf '%s\n' '{"Patches":[{"ResourceFilter":{"ResourceType":"listener","TrafficDirection":"outbound"},"Op":"add","Path":"/drain_type","Value":4294967297}]}' >"$work/args.json"
"$bin" validate --consul-arguments "$work/args.json" --convention typed >"$work/stdout" 2>"$work/out"
if grep -qF "low 32 bits, 1, which names no value" "$work/out"; then
  echo "FAIL enum_low_bits_hint: the hint says 1 names no value of Listener.DrainType (1 is MODIFY_ONLY):"; cat "$work/out"; fail=$((fail+1))
else pass=$((pass+1)); fi

# 7. mapstructure matches a key to a field with strings.EqualFold, Unicode's simple case folding:
#    U+017F LATIN SMALL LETTER LONG S folds to s, so "Patche\u017f" is Patches and
#    "Service\u017f" is Services to Consul (decoded, then applied to db only). Ours folds ASCII.
run '{"Patche\u017f":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},"Op":"remove","Path":"/circuit_breakers"}]}'
check unicode_fold_patches 0 $? "$work/out" ""
run '{"Patches":[{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"inbound","Service\u017f":[{"Name":"db"}]},"Op":"remove","Path":"/name"}]}'
check unicode_fold_services 1 $? "$work/out" '1 error occurred:
	* invalid Patches[0]: patch contains non-empty ResourceFilter.Services but ResourceFilter.TrafficDirection is not "outbound"'

# 8. mapstructure collects every error and counts them all: 65 patches with an unconvertible Op
#    are "65 error(s) decoding", the points sorted as strings (Patches[0], Patches[10], ...).
#    Ours keeps 64 and says "64 error(s)", so Consul's text is no longer a prefix.
p='{"ResourceFilter":{"ResourceType":"cluster","TrafficDirection":"outbound"},"Op":[],"Path":"/name"}'
ps=$p; for i in $(seq 2 65); do ps="$ps,$p"; done
run "{\"Patches\":[$ps]}"
rc=$?; head -1 "$work/out" >"$work/first"
check decode_error_count_65 1 $rc "$work/first" "error decoding extension arguments: 65 error(s) decoding:"
# 9. %v prints a value whole: a 300-character string inside a list is not cut (ours stops at 255
#    bytes of the value, without a mark, and the closing "]'" is lost).
long=$(printf 'x%.0s' $(seq 300))
run "{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"cluster\",\"TrafficDirection\":\"outbound\"},\"Op\":\"remove\",\"Path\":[\"$long\",\"y\"]}]}"
check decode_value_whole 1 $? "$work/out" "error decoding extension arguments: 1 error(s) decoding:

* 'Patches[0].Path' expected type 'string', got unconvertible type '[]interface {}', value: '[$long y]'"

# 4. The same arguments in a ServiceDefaults through validate -f (the webhook's pipeline): the
#    entry Consul refuses (BasicExtensionAdapter) or cannot decode (Debug: [null]) is valid here.
cat >"$work/sd.yaml" <<'YAML'
apiVersion: consul.hashicorp.com/v1alpha1
kind: ServiceDefaults
metadata:
  name: api
spec:
  envoyExtensions:
    - name: builtin/property-override
      arguments:
        BasicExtensionAdapter: x
        Patches:
          - ResourceFilter: {ResourceType: cluster, TrafficDirection: outbound}
            Op: remove
            Path: /name
YAML
"$bin" validate -f "$work/sd.yaml" >"$work/out" 2>&1
check servicedefaults_embedded_adapter 1 $? "$work/out"
sed -i 's/BasicExtensionAdapter: x/Debug: [null]/' "$work/sd.yaml"
"$bin" validate -f "$work/sd.yaml" >"$work/out" 2>&1
check servicedefaults_debug_null 1 $? "$work/out"
finish
