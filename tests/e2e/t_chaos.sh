#!/usr/bin/env bash
# Many PropertyOverrides with random valid and invalid edits, under injected API faults (watches
# dropped, forced 410s, 429 and 5xx bursts): when the faults stop, every target holds exactly the
# entries the PropertyOverrides call for, and every status says so; the never-regress observer
# watched every revision meanwhile and saw nothing lost (observer.py). Fault injection is the local
# server's (POST /admin/faults): on the real kube-apiserver (PO_APISERVER=real) the same random
# edits run without faults.
. "$(dirname "$0")/lib.sh"
build=$1
count=${PO_CHAOS_COUNT:-1000}
lc_start "$build" "$e2e_work" || exit 1
obs_start || exit 1
lc_controller --workers 4 || exit 1
token=$(lc_token)
nofaults=() how="with faults"
[ "$LC_KIND" = real ] && nofaults=(--no-faults) how="without faults (the real server has no fault injection)"
/usr/bin/python3 "$(dirname "$0")/chaos.py" --url "$LC_URL" --token "$token" --ca "$e2e_work/tls/ca.crt" --count "$count" \
  --targets 40 --seed "${PO_CHAOS_SEED:-7}" --timeout 240 "${nofaults[@]}"
rc=$?
[ $rc = 0 ] && ok "chaos $how: $count overrides converged" || bad "chaos $how did not converge"
check "observer: no revision lost a live entry or target, none carries an invalid entry" obs_stop
finish
