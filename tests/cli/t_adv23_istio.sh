#!/usr/bin/env bash
# adv-23: PropertyOverrides of an Istio target refused although a MERGE does what Consul does
# (over-cautious): every testdata/adv23-istio-accept/*.yaml must render (the first line of each
# says why; the istio-envoyfilter oracle judges the same patches the same once rendered).
. "$(dirname "$0")/lib.sh"
for f in "$data"/adv23-istio-accept/*.yaml; do
  "$bin" render --istio-version 1.31 -f "$f" >"$work/out" 2>&1
  check "rendered $f" 0 $? "$work/out"
done
finish
