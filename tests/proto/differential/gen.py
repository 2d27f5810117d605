# Generated JSON texts for run.sh (see there). PO_DIFF_ASCII_BASE64=1 keeps base64 rows ASCII
# (for an OLD build without json-base64-index.patch, which non-ASCII base64 crashes).
import os, random, struct, sys
def ascii_b64(s):
    if os.environ.get('PO_DIFF_ASCII_BASE64') != '1': return s
    return bytes(c for c in s if c < 0x80).replace(b'\\u00e9', b'').replace(b'\\ud83d', b'').replace(b'\\u0000', b'')
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
alpha = [b'a', b'b', b'"', b'\\', b'\x00', b'\x01', b'\x1f', b'\n', b'\t', b' ', b'\x7f', b'\x80', b'\xff', b'\xc3\xa9', b'u', b'n', b'0', b'1', b'/', b'=', b'\\u00e9', b'\\ud83d', b'\\"', b'\\\\', b'\\n', b'\\u0000', b'\\x', b'\\', b'A', b'+', b'-', b'.', b'e']
def rstr():
    n = random.choice([0,1,2,3,5,7,8,9,15,16,17,23,24,31,33,64,100])
    return b''.join(random.choice(alpha) if random.random() < 0.3 else random.choice([b'a', b'x', b'Z', b'9']) for _ in range(n))
T = [
 lambda s: b'{"name":"' + s + b'"}',
 lambda s: b'{"name":"' + s + b'","alt_stat_name":"q"}',
 lambda s: b'{"' + s + b'":"x"}',
 lambda s: b'{"name":"' + s,
 lambda s: b'{"per_connection_buffer_limit_bytes":"' + s + b'"}',
 lambda s: b'{"connect_timeout":"' + s + b'"}',
 lambda s: b'{"lb_policy":"' + s + b'"}',
 lambda s: b'{"metadata":{"filter_metadata":{"' + s + b'":{"k":"' + s + b'"}}}}',
 lambda s: b'{"transport_socket":{"name":"t","typed_config":{"@type":"' + s + b'"}}}',
 lambda s: b'{"transport_socket":{"name":"t","typed_config":{"@type":"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext","sni":"' + s + b'"}}}',
 lambda s: b'{"transport_socket":{"name":"t","typed_config":{"sni":"' + s + b'","@type":"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"}}}',
 lambda s: b'{"load_assignment":{"cluster_name":"' + s + b'","endpoints":[{"lb_endpoints":[{"endpoint":{"address":{"socket_address":{"address":"' + s + b'","port_value":1}}}}]}]}}',
 lambda s: b'{"typed_extension_protocol_options":{"' + s + b'":{"@type":"type.googleapis.com/google.protobuf.StringValue","value":"' + s + b'"}}}',
 lambda s: b'{"name":"' + s + b'", "name":"' + s + b'"}',
 lambda s: b'{"common_lb_config":{"update_merge_window":"' + s + b'"}}',
 lambda s: b'{"dns_lookup_family":' + s + b'}',
 lambda s: b'{"upstream_config":{"name":"x","typed_config":{"@type":"type.googleapis.com/google.protobuf.Struct","value":{"' + s + b'":"' + s + b'"}}}}',
 lambda s: b"{\"upstream_config\":{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/google.protobuf.BytesValue\",\"value\":\"" + ascii_b64(s) + b"\"}}}",
 lambda s: b'{"upstream_config":{"name":"x","typed_config":{"@type":"type.googleapis.com/google.protobuf.Timestamp","value":"' + s + b'"}}}',
 lambda s: b'{"upstream_config":{"name":"x","typed_config":{"@type":"type.googleapis.com/google.protobuf.FieldMask","value":"' + s + b'"}}}',
 lambda s: b'{"upstream_config":{"name":"x","typed_config":{"@type":"type.googleapis.com/google.protobuf.DoubleValue","value":"' + s + b'"}}}',
]
out = sys.stdout.buffer
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
for i in range(N):
    b = random.choice(T)(rstr())
    if random.random() < 0.1: b = b[:random.randrange(len(b)+1)]
    out.write(struct.pack('<I', len(b)) + b)
# truncations at every byte of a rich cluster
full = open(sys.argv[3], 'rb').read() if len(sys.argv) > 3 else None
if full:
    for k in range(len(full)+1):
        b = full[:k]
        out.write(struct.pack('<I', len(b)) + b)
