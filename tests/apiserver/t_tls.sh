#!/usr/bin/env bash
# TLS with generated certificates, bearer tokens (401 with a Status), the generated kubeconfig
# used by kubectl, and certificates reused on restart.
APISERVER=$1
source "$(dirname "$0")/lib.sh"
start_server api --tls-dir "$T/tls" --token secret-1 --token secret-2
[[ "$URL" == https://127.0.0.1:* ]] || fail "URL $URL"
for f in ca.crt tls.crt tls.key kubeconfig; do [ -s "$T/tls/$f" ] || fail "missing $f"; done
openssl verify -CAfile "$T/tls/ca.crt" "$T/tls/tls.crt" >/dev/null || fail "serving certificate does not verify"
openssl x509 -in "$T/tls/tls.crt" -noout -ext subjectAltName | grep -q 'IP Address:127.0.0.1' || fail "SAN"
pass "certificates generated"

CURL_AUTH=(--cacert "$T/tls/ca.crt")
http GET /api/v1/namespaces
expect_code 401 "no token"
expect_eq "$(jbody .kind) $(jbody .reason) $(jbody .code)" "Status Unauthorized 401" "401 Status"
CURL_AUTH=(--cacert "$T/tls/ca.crt" -H "Authorization: Bearer wrong")
http GET /api/v1/namespaces
expect_code 401 "wrong token"
CURL_AUTH=(--cacert "$T/tls/ca.crt" -H "Authorization: Bearer secret-2")
http GET /api/v1/namespaces
expect_code 200 "second token"
CURL_AUTH=(--cacert "$T/tls/ca.crt")
http GET /healthz
expect_code 200 "healthz needs no token"
pass "bearer tokens"

if command -v kubectl >/dev/null; then
  export KUBECONFIG="$T/tls/kubeconfig"
  expect_eq "$(k get ns default -o jsonpath='{.metadata.name}')" default "kubectl over TLS with the generated kubeconfig"
  pass "kubectl with DIR/kubeconfig"
fi
sum=$(sha256sum "$T/tls/ca.crt")
stop_server
start_server api --tls-dir "$T/tls"
expect_eq "$(sha256sum "$T/tls/ca.crt")" "$sum" "certificates reused"
tok=$(grep 'token:' "$T/tls/kubeconfig" | awk '{print $2}')
[ -n "$tok" ] || fail "TLS without --token writes a generated token"
CURL_AUTH=(--cacert "$T/tls/ca.crt" -H "Authorization: Bearer $tok")
http GET /api/v1/namespaces/default
expect_code 200 "generated token"
pass "restart reuses certificates; a token is generated when none is given"
stop_server
