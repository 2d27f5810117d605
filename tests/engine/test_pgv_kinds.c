/* Every protoc-gen-validate rule kind the evaluator judges, including those no field of the
 * snapshot carries (hostname, ip, uuid, email, Timestamp bounds, Any in, map keys...), as rows:
 * a field of the schema (the host), the validate.FieldRules put on it (po_Pgv_MemoPut_: as if its
 * options said so), a message holding a value there, and what pgv.c must say. The texts follow
 * PGV's meaning as go-control-plane's generated validators have it (issue 22). White-box: the
 * evaluator's own entry points, the ones the one rule walk calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"
#include "internal.h"

typedef struct {
  const char *host;  /* "full.message.Name field" */
  const char *rules; /* validate.FieldRules, proto3 JSON */
  const char *value; /* the host message, proto3 JSON */
  const char *want;  /* the violation, or NULL */
  const char *unjudged; /* the rule kind po_Pgv_Unjudged names, or NULL */
} Row;

#define STR "envoy.config.cluster.v3.Cluster alt_stat_name"
#define LIST "envoy.config.cluster.v3.Cluster lrs_report_endpoint_metrics"
#define BYTES "envoy.config.core.v3.DataSource inline_bytes"
#define MAP "envoy.extensions.filters.http.ext_authz.v3.CheckSettings context_extensions"
#define DUR "envoy.config.cluster.v3.Cluster connect_timeout"
#define TS "envoy.data.accesslog.v3.AccessLogCommon start_time"
#define ANY "envoy.config.core.v3.TypedExtensionConfig typed_config"
#define V(x) "{\"alt_stat_name\": \"" x "\"}"

static const Row kRows[] = {
    /* string formats */
    {STR, "{\"string\": {\"hostname\": true}}", V("a-b.Example.com."), NULL, NULL},
    {STR, "{\"string\": {\"hostname\": true}}", V("-a.com"), "\"-a.com\" violates string hostname (a label starts or ends with '-')", NULL},
    {STR, "{\"string\": {\"hostname\": true}}", V("a..b"), "\"a..b\" violates string hostname (a label is empty or longer than 63 characters)", NULL},
    {STR, "{\"string\": {\"hostname\": true}}", V("a_b"), "\"a_b\" violates string hostname (only letters, digits, '-' and '.' between labels)", NULL},
    {STR, "{\"string\": {\"ip\": true}}", V("::1"), NULL, NULL},
    {STR, "{\"string\": {\"ip\": true}}", V("10.0.0.256"), "\"10.0.0.256\" violates string ip (not an IPv4 or IPv6 address)", NULL},
    {STR, "{\"string\": {\"ip\": true}}", V("010.0.0.1"), "\"010.0.0.1\" violates string ip (not an IPv4 or IPv6 address)", NULL},
    {STR, "{\"string\": {\"ipv4\": true}}", V("::ffff:1.2.3.4"), NULL, NULL}, /* PGV's To4() */
    {STR, "{\"string\": {\"ipv4\": true}}", V("::1"), "\"::1\" violates string ipv4 (not an IPv4 address)", NULL},
    {STR, "{\"string\": {\"ipv6\": true}}", V("1.2.3.4"), "\"1.2.3.4\" violates string ipv6 (not an IPv6 address)", NULL},
    {STR, "{\"string\": {\"address\": true}}", V("1.2.3.4"), NULL, NULL},
    {STR, "{\"string\": {\"address\": true}}", V("a b"), "\"a b\" violates string address (neither a hostname nor an IP address)", NULL},
    {STR, "{\"string\": {\"uuid\": true}}", V("0123abcd-0123-ABCD-0123-0123456789ab"), NULL, NULL},
    {STR, "{\"string\": {\"uuid\": true}}", V("0123abcd-0123-abcd-0123-0123456789a"), "\"0123abcd-0123-abcd-0123-0123456789a\" violates string uuid (want 8-4-4-4-12 hexadecimal digits)", NULL},
    /* string members */
    {STR, "{\"string\": {\"const\": \"x\"}}", V("y"), "\"y\" violates string const \"x\"", NULL},
    {STR, "{\"string\": {\"not_in\": [\"a\", \"b\"]}}", V("b"), "\"b\" violates string not_in (a refused value)", NULL},
    {STR, "{\"string\": {\"in\": [\"a\"]}}", V("b"), "\"b\" violates string in (not one of the allowed values)", NULL},
    {STR, "{\"string\": {\"prefix\": \"ab\", \"suffix\": \"yz\"}}", V("abxyz"), NULL, NULL},
    {STR, "{\"string\": {\"suffix\": \"yz\"}}", V("abx"), "\"abx\" violates string suffix \"yz\"", NULL},
    {STR, "{\"string\": {\"not_contains\": \"x\"}}", V("abx"), "\"abx\" violates string not_contains \"x\"", NULL},
    {STR, "{\"string\": {\"max_len\": 1}}", V("\xc3\xa9"), NULL, NULL}, /* one rune, two bytes */
    {STR, "{\"string\": {\"max_bytes\": 1}}", V("\xc3\xa9"), "\"\xc3\xa9\" violates string max_bytes 1 (it has 2)", NULL},
    {STR, "{\"string\": {\"min_len\": 1, \"ignore_empty\": true}}", "{}", NULL, NULL},
    {STR, "{\"string\": {\"min_len\": 1}}", "{}", "\"\" violates string min_len 1 (it has 0)", NULL},
    /* pattern: RE2 translated; the snapshot's own three shapes, then one with no POSIX form */
    {STR, "{\"string\": {\"pattern\": \"^[0-9a-zA-Z_\\\\-\\\\./~:]+$\"}}", V("a/b.c~d:-_"), NULL, NULL},
    {STR, "{\"string\": {\"pattern\": \"^[0-9a-zA-Z_\\\\-\\\\./~:]+$\"}}", V("a b"), "\"a b\" violates string pattern \"^[0-9a-zA-Z_\\-\\./~:]+$\"", NULL},
    {STR, "{\"string\": {\"pattern\": \"^$|^.*\\\\.mmdb$\"}}", V("x.mmdb"), NULL, NULL},
    {STR, "{\"string\": {\"pattern\": \"^$|^.*\\\\.mmdb$\"}}", V("x.db"), "\"x.db\" violates string pattern \"^$|^.*\\.mmdb$\"", NULL},
    {STR, "{\"string\": {\"pattern\": \"^[^?#]+[^?#/]$\"}}", V("/a/\xc3\xa9"), NULL, NULL},
    {STR, "{\"string\": {\"pattern\": \"^[^?#]+[^?#/]$\"}}", V("/a/"), "\"/a/\" violates string pattern \"^[^?#]+[^?#/]$\"", NULL},
    {STR, "{\"string\": {\"pattern\": \"^.{2}$\"}}", V("\xc3\xa9x"), NULL, NULL}, /* '.' is a rune, as in RE2 */
    {STR, "{\"string\": {\"pattern\": \"\\\\bx\"}}", V("y"), NULL, "string.pattern"},
    {STR, "{\"string\": {\"email\": true}}", V("y"), NULL, "string.email"},
    {STR, "{\"string\": {\"uri\": true}}", V("y"), NULL, "string.uri"},
    /* bytes */
    {BYTES, "{\"bytes\": {\"ipv4\": true}}", "{\"inline_bytes\": \"AQIDBA==\"}", NULL, NULL},
    {BYTES, "{\"bytes\": {\"ipv4\": true}}", "{\"inline_bytes\": \"AQID\"}", "3 bytes violate bytes ipv4 (want 4)", NULL},
    {BYTES, "{\"bytes\": {\"ip\": true}}", "{\"inline_bytes\": \"AQID\"}", "3 bytes violate bytes ip (want 4 or 16)", NULL},
    {BYTES, "{\"bytes\": {\"const\": \"AQI=\"}}", "{\"inline_bytes\": \"AQID\"}", "\"\x01\x02\x03\" violates bytes const \"\x01\x02\"", NULL},
    /* lists */
    {LIST, "{\"repeated\": {\"unique\": true}}", "{\"lrs_report_endpoint_metrics\": [\"a\", \"b\", \"a\"]}", "item 2 repeats item 0: violates repeated unique", NULL},
    {LIST, "{\"repeated\": {\"min_items\": 3}}", "{\"lrs_report_endpoint_metrics\": [\"a\", \"b\"]}", "2 items violate repeated min_items 3", NULL},
    {LIST, "{\"repeated\": {\"max_items\": 1}}", "{\"lrs_report_endpoint_metrics\": [\"a\", \"b\"]}", "2 items violate repeated max_items 1", NULL},
    {LIST, "{\"repeated\": {\"items\": {\"string\": {\"email\": true}}}}", "{}", NULL, "repeated.items.string.email"},
    /* maps */
    {MAP, "{\"map\": {\"min_pairs\": 1}}", "{}", "0 pairs violate map min_pairs 1", NULL},
    {MAP, "{\"map\": {\"max_pairs\": 1}}", "{\"context_extensions\": {\"a\": \"1\", \"b\": \"2\"}}", "2 pairs violate map max_pairs 1", NULL},
    {MAP, "{\"map\": {\"keys\": {\"string\": {\"min_len\": 2}}}}", "{\"context_extensions\": {\"a\": \"1\"}}", "a key: \"a\" violates string min_len 2 (it has 1)", NULL},
    {MAP, "{\"map\": {\"values\": {\"string\": {\"in\": [\"x\"]}}}}", "{\"context_extensions\": {\"a\": \"1\"}}", "a value: \"1\" violates string in (not one of the allowed values)", NULL},
    {MAP, "{\"map\": {\"no_sparse\": true}}", "{}", NULL, "map.no_sparse"},
    /* Duration: in, not_in, a reversed range, required */
    {DUR, "{\"duration\": {\"in\": [\"1s\", \"2s\"]}}", "{\"connect_timeout\": \"1.5s\"}", "1.5s violates duration in (not one of the allowed values)", NULL},
    {DUR, "{\"duration\": {\"not_in\": [\"1s\"]}}", "{\"connect_timeout\": \"1s\"}", "1s violates duration not_in", NULL},
    {DUR, "{\"duration\": {\"lt\": \"1s\", \"gt\": \"5s\"}}", "{\"connect_timeout\": \"0.5s\"}", NULL, NULL},
    {DUR, "{\"duration\": {\"lt\": \"1s\", \"gt\": \"5s\"}}", "{\"connect_timeout\": \"3s\"}", "3s violates duration lt 1s or gt 5s (an upper bound not above the lower: valid is below 1s or above 5s)", NULL},
    {DUR, "{\"duration\": {\"required\": true}}", "{}", "the new envoy.config.cluster.v3.Cluster lacks 'connect_timeout', which Envoy requires", NULL},
    /* Timestamp: bounds, against the clock */
    {TS, "{\"timestamp\": {\"gt\": \"2000-01-01T00:00:00Z\"}}", "{\"start_time\": \"1999-01-01T00:00:00Z\"}", "915148800s violates timestamp gt 946684800s", NULL},
    {TS, "{\"timestamp\": {\"lt_now\": true}}", "{\"start_time\": \"2000-01-01T00:00:00Z\"}", NULL, NULL},
    {TS, "{\"timestamp\": {\"gt_now\": true}}", "{\"start_time\": \"2000-01-01T00:00:00Z\"}", "946684800s violates timestamp gt_now", NULL},
    {TS, "{\"timestamp\": {\"within\": \"60s\"}}", "{\"start_time\": \"2000-01-01T00:00:00Z\"}", "946684800s violates timestamp within 60s of now", NULL},
    {TS, "{\"timestamp\": {\"required\": true}}", "{}", "the new envoy.data.accesslog.v3.AccessLogCommon lacks 'start_time', which Envoy requires", NULL},
    /* Any: in, not_in on the type URL */
    {ANY, "{\"any\": {\"in\": [\"type.googleapis.com/google.protobuf.Empty\"]}}",
     "{\"typed_config\": {\"@type\": \"type.googleapis.com/google.protobuf.Struct\", \"value\": {}}}",
     "type_url \"type.googleapis.com/google.protobuf.Struct\" violates any in (not one of the allowed types)", NULL},
    {ANY, "{\"any\": {\"not_in\": [\"type.googleapis.com/google.protobuf.Struct\"]}}",
     "{\"typed_config\": {\"@type\": \"type.googleapis.com/google.protobuf.Struct\", \"value\": {}}}",
     "type_url \"type.googleapis.com/google.protobuf.Struct\" violates any not_in", NULL},
};

/* What the evaluator says of field f of msg under the rules put on it: a set message by its own
 * rules, an absent one by the required rules of its message (whole), anything else by the field's. */
static const char *judge(const po_Schema *s, const po_Message *m, const upb_FieldDef *f, po_Arena *a) {
  bool msg_field = upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsMap(f) && !upb_FieldDef_IsRepeated(f);
  if (msg_field && upb_Message_Has(m->msg, f)) {
    return po_Pgv_CheckMessageValue(s, f, upb_FieldDef_MessageSubDef(f), upb_Message_Get(m->msg, f).msg_val, a);
  }
  if (msg_field) return po_Pgv_CheckRequired(s, m->def, m->msg, a);
  return po_Pgv_CheckField(s, m->msg, f, true, a);
}

static void test_rows(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_EnvoyApi_Schema_(NULL, NULL, &st);
  assert_non_null(s);
  int bad = 0;
  for (size_t i = 0; i < sizeof kRows / sizeof *kRows; i++) {
    const Row *r = &kRows[i];
    po_Arena *a = po_Arena_New();
    assert_true(po_Pgv_MemoRules(a));
    char type[160];
    const char *sp = strchr(r->host, ' ');
    snprintf(type, sizeof type, "%.*s", (int)(sp - r->host), r->host);
    po_Message *host = po_Message_ParseJson(NULL, type, r->value, strlen(r->value), a, &st);
    po_Message *rules = po_Message_ParseJson(NULL, "validate.FieldRules", r->rules, strlen(r->rules), a, &st);
    if (!host || !rules) {
      fprintf(stderr, "row %zu: %s\n", i, st.message);
      bad++;
      po_Arena_Free(a);
      continue;
    }
    const upb_FieldDef *f = upb_MessageDef_FindFieldByName(host->def, sp + 1);
    assert_non_null(f);
    assert_true(po_Pgv_MemoPut_(a, f, rules->msg, rules->def));
    const char *got = judge(s, host, f, a), *unj = po_Pgv_Unjudged(s, f, a);
    bool ok = (!got == !r->want) && (!got || !strcmp(got, r->want));
    bool unj_ok = r->unjudged ? unj && strstr(unj, r->unjudged) : !unj;
    if (!ok || !unj_ok) {
      fprintf(stderr, "row %zu (%s %s on %s):\n  got:  %s\n  want: %s\n  unjudged: %s (want %s)\n", i, r->host, r->rules,
              r->value, got ? got : "(none)", r->want ? r->want : "(none)", unj ? unj : "(none)",
              r->unjudged ? r->unjudged : "(none)");
      bad++;
    }
    po_Arena_Free(a);
  }
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
