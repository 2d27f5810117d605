#!/usr/bin/env bash
# explain: fields, Consul's type names, Envoy's rules, oneofs, deprecation, what a patch can
# set, and Consul's texts (with a did-you-mean) for paths no patch could use.
. tests/cli/lib.sh

"$bin" explain cluster/outlier_detection/max_ejection_percent >"$work/out" 2>&1
check "max_ejection_percent" 0 $? "$work/out" "PATH:       cluster/outlier_detection/max_ejection_percent
RESOURCE:   cluster (envoy.config.cluster.v3.Cluster)
${api_name_default}
FIELD:      max_ejection_percent (envoy.config.cluster.v3.OutlierDetection, field 4, JSON name maxEjectionPercent)
TYPE:       google.protobuf.UInt32Value (wrapper of uint32)
RULES:      uint32 lte 100
PATCH:      add can set it: a uint32 value (the wrapper is filled in)
            remove clears it

FIELDS of google.protobuf.UInt32Value:
  value                                      uint32"

"$bin" explain cluster >"$work/out" 2>&1
check "cluster" 0 $?
contains "cluster fields" "$work/out" "FIELDS of envoy.config.cluster.v3.Cluster:"
contains "cluster name rule" "$work/out" "  name                                       string  [string min_len 1]"
contains "cluster oneof" "$work/out" "  type                                       enum (envoy.config.cluster.v3.Cluster.DiscoveryType)  [oneof cluster_discovery_type]  [enum defined_only]"
contains "cluster duration rule" "$work/out" "  connect_timeout                            google.protobuf.Duration  [duration gt 0s]"
contains "cluster deprecated" "$work/out" "  max_requests_per_connection                google.protobuf.UInt32Value (wrapper of uint32)  [deprecated]"
contains "cluster repeated" "$work/out" "  health_checks                              repeated envoy.config.core.v3.HealthCheck  [cannot be set]"
contains "cluster map" "$work/out" "  typed_extension_protocol_options           map (map<string, google.protobuf.Any>)  [cannot be set]"

"$bin" explain cluster/outlier_detection >"$work/out" 2>&1
check "outlier_detection" 0 $?
contains "outlier field" "$work/out" "TYPE:       envoy.config.cluster.v3.OutlierDetection"
contains "outlier settable" "$work/out" "PATCH:      add can set it: an object of its scalar fields (it replaces the whole message), or a path to one of its fields"
contains "outlier list" "$work/out" "  max_ejection_percent                       google.protobuf.UInt32Value (wrapper of uint32)  [uint32 lte 100]"
contains "outlier interval" "$work/out" "  interval                                   google.protobuf.Duration  [duration gt 0s]"

"$bin" explain cluster/connect_timeout >"$work/out" 2>&1
check "connect_timeout" 0 $?
contains "duration how" "$work/out" 'PATCH:      add can set it: an object {seconds, nanos}, or a duration string such as "5s" or "250ms"'
"$bin" explain route/response_headers_to_remove >"$work/out" 2>&1
check "repeated string" 0 $?
contains "repeated why" "$work/out" "PATCH:      add cannot set it: Consul's API delivers every JSON array as []interface {}, which no repeated field accepts"
"$bin" explain cluster/lb_policy >"$work/out" 2>&1
contains "enum values" "$work/out" "TYPE:       enum (enum envoy.config.cluster.v3.Cluster.LbPolicy: ROUND_ROBIN, LEAST_REQUEST, RING_HASH"
"$bin" explain cluster-load-assignment/policy/overprovisioning_factor >"$work/out" 2>&1
contains "cla rule" "$work/out" "RULES:      uint32 gt 0"
"$bin" explain envoy.config.cluster.v3.OutlierDetection/interval >"$work/out" 2>&1
check "message name" 0 $?
contains "message name field" "$work/out" "FIELD:      interval (envoy.config.cluster.v3.OutlierDetection, field 2, JSON name interval)"
"$bin" explain listener >"$work/out" 2>&1
check "listener" 0 $?
contains "listener fields" "$work/out" "FIELDS of envoy.config.listener.v3.Listener:"

# Paths no patch could use: Consul's texts.
"$bin" explain cluster/outlier_detection/max_ejection_percentage >"$work/out" 2>&1
check "unknown" 1 $?
contains "unknown text" "$work/out" "propertyoverride explain: no match for field 'max_ejection_percentage'!
available envoy.config.cluster.v3.OutlierDetection fields:"
contains "unknown suggests" "$work/out" "did you mean 'max_ejection_percent'?"
"$bin" explain cluster/outlierDetection >"$work/out" 2>&1
contains "json name suggests" "$work/out" "did you mean 'outlier_detection'? Paths use proto field names, not JSON names"
"$bin" explain route/virtual_hosts/name >"$work/out" 2>&1
check "repeated parent" 1 $? "$work/out" "propertyoverride explain: path contains member of repeated field 'virtual_hosts'; repeated field member access is not supported"
"$bin" explain cluster/typed_extension_protocol_options/x >"$work/out" 2>&1
check "map parent" 1 $? "$work/out" "propertyoverride explain: path contains member of map field 'typed_extension_protocol_options'; map field member access is not supported"
"$bin" explain cluster/transport_socket/typed_config/x >"$work/out" 2>&1
check "any parent" 1 $? "$work/out" "propertyoverride explain: variant-type message fields (google.protobuf.Any) are not supported"
"$bin" explain cluster/name/x >"$work/out" 2>&1
check "scalar parent" 1 $? "$work/out" "propertyoverride explain: path contains member of non-message field 'name' (type 'string'); this type does not support child fields"
"$bin" explain cluster/outlier_detection//interval >"$work/out" 2>&1
check "empty segment" 1 $? "$work/out" "propertyoverride explain: empty field name in path"
# One resolver for explain and compile: the depth bound and its text are compile's, and a
# trailing slash is only a convenience of the query.
deep=envoy.type.matcher.v3.ValueMatcher
for i in $(seq 16); do deep="$deep/list_match/one_of"; done
"$bin" explain "$deep" >"$work/out" 2>&1
check "32 segments" 0 $?
"$bin" explain "$deep/list_match/one_of" >"$work/out" 2>&1
check "34 segments" 1 $? "$work/out" "propertyoverride explain: path has 34 segments; at most 32 are supported"
"$bin" explain cluster/outlier_detection/ >"$work/out" 2>&1
check "trailing slash" 0 $?
contains "trailing slash lists" "$work/out" "PATH:       cluster/outlier_detection"
"$bin" explain nope >"$work/out" 2>&1
check "unknown root" 1 $?
"$bin" explain >"$work/out" 2>&1
check "usage" 2 $?
"$bin" explain --help >"$work/out" 2>&1
check "help" 0 $?
finish
