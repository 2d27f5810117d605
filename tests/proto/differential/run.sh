#!/usr/bin/env bash
# Differential check of upb's JSON decoder as patched here against another build's (by hand, not
# in ctest): the same generated Cluster texts (every kind of string at each place of a word, as
# names, keys, enums, Durations, base64, Any type URLs; some truncated; then a cluster cut at
# every byte) decoded by both, each giving its deterministic binary encoding or its exact error.
#   run.sh NEW_BUILD OLD_BUILD [SEEDS]    e.g. run.sh build ../old/build "1 2 3"
# OLD_BUILD is a build of another commit (git worktree add ../old COMMIT; cmake there); its
# libpo_upb.a is linked with this tree's po_proto. Prints "same SEED LINES OKS" per seed.
# An OLD_BUILD without json-base64-index.patch crashes on non-ASCII base64 (the bug it fixes):
# PO_DIFF_ASCII_BASE64=1 keeps those rows ASCII. Expect a Debug OLD_BUILD to abort on hex numbers.
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
new=$(cd "$1" && pwd) old=$(cd "$2" && pwd) seeds=${3:-1 2 3 4}
u=$top/.deps/grpc/third_party/upb g=$top/.deps/grpc/src/core/ext/upb-generated
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for v in new old; do
  b=$new; [ $v = old ] && b=$old
  gcc -O1 -std=c11 -o "$work/jsdiff-$v" "$(dirname "$0")/jsdiff.c" -I"$top/proto/include" -I"$u" -I"$g" \
    "$new/proto/libpo_proto.a" "$b/libpo_upb.a" -lm
done
printf '{"name":"api.default.dc1.internal.t.consul","connect_timeout":"5s","outlier_detection":{"max_ejection_percent":50},"transport_socket":{"name":"tls","typed_config":{"@type":"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext","sni":"api.default.dc1.internal.t.consul"}}}' >"$work/cluster.json"
for s in $seeds; do
  /usr/bin/python3 "$(dirname "$0")/gen.py" "$s" 40000 "$work/cluster.json" >"$work/in"
  "$work/jsdiff-old" envoy.config.cluster.v3.Cluster <"$work/in" >"$work/old"
  "$work/jsdiff-new" envoy.config.cluster.v3.Cluster <"$work/in" >"$work/new"
  if cmp -s "$work/old" "$work/new"; then echo "same $s $(wc -l <"$work/new") $(grep -c '^OK' "$work/new")"
  else echo "DIFFERENT $s:"; diff "$work/old" "$work/new" | head -20; exit 1; fi
done
