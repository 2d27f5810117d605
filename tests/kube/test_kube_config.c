/* kubeconfig and in-cluster configuration. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "po/kube/config.h"

#define DATA PO_KUBE_TESTDATA

static po_KubeConfig *parse(const char *text, const char *context, po_CtlStatus *st) {
  po_KubeConfig *c = NULL;
  po_KubeConfig_ParseYaml(text, strlen(text), "/cfg/dir/kubeconfig", context, &c, st);
  return c;
}

static void expect_error(const char *text, const char *context, const char *msg) {
  po_CtlStatus st;
  po_KubeConfig *c = parse(text, context, &st);
  if (c || strcmp(st.message, msg) != 0) {
    print_error("expected: %s\n     got: %s\n", msg, c ? "(success)" : st.message);
    po_KubeConfig_Free(c);
    fail();
  }
  assert_int_equal(st.code, kPo_Ctl_Config);
}

static void test_full_file_current_context(void **state) {
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  assert_true(po_KubeConfig_LoadFiles(DATA "/full.kubeconfig", NULL, &c, &st));
  assert_string_equal(po_KubeConfig_Context(c), "dev");
  assert_string_equal(po_KubeConfig_Server(c), "https://127.0.0.1:8443"); /* trailing / dropped */
  assert_string_equal(po_KubeConfig_Namespace(c), "team-a");
  assert_string_equal(po_KubeConfig_CaFile(c), DATA "/certs/ca.crt"); /* relative to the file */
  assert_null(po_KubeConfig_CaData(c, NULL));
  assert_string_equal(po_KubeConfig_CertFile(c), "/abs/client.crt");
  assert_string_equal(po_KubeConfig_KeyFile(c), DATA "/certs/client.key");
  assert_false(po_KubeConfig_InsecureSkipTlsVerify(c));
  assert_false(po_KubeConfig_IsInCluster(c));
  char tok[64];
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "");
  po_KubeConfig_Free(c);
}

static void test_full_file_explicit_context_data_forms(void **state) {
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  assert_true(po_KubeConfig_LoadFiles(DATA "/full.kubeconfig", "prod", &c, &st));
  assert_string_equal(po_KubeConfig_Server(c), "https://prod.example:6443");
  assert_string_equal(po_KubeConfig_Namespace(c), "default");
  size_t n;
  const char *ca = po_KubeConfig_CaData(c, &n);
  assert_non_null(ca);
  assert_int_equal(n, strlen("-----BEGIN CERTIFICATE-----\nCADATA\n-----END CERTIFICATE-----\n"));
  assert_memory_equal(ca, "-----BEGIN CERTIFICATE-----\nCADATA\n", 35);
  assert_null(po_KubeConfig_CaFile(c));
  assert_string_equal(po_KubeConfig_CertData(c, &n), "CERT");
  assert_int_equal(n, 4);
  assert_string_equal(po_KubeConfig_KeyData(c, &n), "KEY");
  char tok[64];
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "abc.def.ghi");
  po_KubeConfig_Free(c);
}

static void test_token_file_and_insecure(void **state) {
  const char *text =
      "current-context: c\n"
      "clusters:\n- name: k\n  cluster:\n    server: http://localhost:1\n    insecure-skip-tls-verify: true\n"
      "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
      "users:\n- name: u\n  user:\n    token: inline\n    tokenFile: tok\n";
  char dir[] = "/tmp/po-kube-cfg-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char origin[256], tokpath[256];
  snprintf(origin, sizeof origin, "%s/config", dir);
  snprintf(tokpath, sizeof tokpath, "%s/tok", dir);
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  assert_true(po_KubeConfig_ParseYaml(text, strlen(text), origin, NULL, &c, &st));
  assert_true(po_KubeConfig_InsecureSkipTlsVerify(c));
  assert_string_equal(po_KubeConfig_TokenFile(c), tokpath);
  char tok[64];
  /* The file is missing: the inline token is used. */
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "inline");
  FILE *f = fopen(tokpath, "w");
  fputs("from-file\n", f);
  fclose(f);
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "from-file");
  po_KubeConfig_Free(c);
  unlink(tokpath);
  rmdir(dir);
}

static void test_kubeconfig_env_merge(void **state) {
  char dir[] = "/tmp/po-kube-cfg-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char a[256], b[256], list[600];
  snprintf(a, sizeof a, "%s/a", dir);
  snprintf(b, sizeof b, "%s/b", dir);
  FILE *f = fopen(a, "w");
  /* a: no current-context, defines cluster k (wins over b's k). */
  fputs("clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\n", f);
  fclose(f);
  f = fopen(b, "w");
  fputs("current-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://b:1'}\n"
        "contexts:\n- name: c\n  context: {cluster: k}\n", f);
  fclose(f);
  snprintf(list, sizeof list, "%s/missing:%s:%s", dir, a, b);
  setenv("KUBECONFIG", list, 1);
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  po_KubeConfigOptions o = {0};
  assert_true(po_KubeConfig_Load(&o, &c, &st));
  assert_string_equal(po_KubeConfig_Server(c), "https://a:1");
  assert_string_equal(po_KubeConfig_Context(c), "c");
  po_KubeConfig_Free(c);
  unsetenv("KUBECONFIG");
  /* An explicit path wins over the environment. */
  o.kubeconfig = b;
  setenv("KUBECONFIG", a, 1);
  assert_true(po_KubeConfig_Load(&o, &c, &st));
  assert_string_equal(po_KubeConfig_Server(c), "https://b:1");
  po_KubeConfig_Free(c);
  unsetenv("KUBECONFIG");
  unlink(a);
  unlink(b);
  rmdir(dir);
}

static void test_errors(void **state) {
  expect_error("a: [1,\n", NULL,
               "/cfg/dir/kubeconfig:2:1: invalid YAML: did not find expected node content while parsing a flow node");
  expect_error("- 1\n", NULL, "/cfg/dir/kubeconfig:1:1: (top level): expected a mapping, found a list");
  expect_error("clusters: []\n", NULL,
               "/cfg/dir/kubeconfig: no current-context is set and no context was given; available contexts: (none)");
  expect_error("contexts:\n- name: a\n  context: {cluster: x}\n- name: b\n  context: {cluster: x}\n", "zz",
               "/cfg/dir/kubeconfig: context \"zz\" not found; available contexts: a, b");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\n", NULL,
               "/cfg/dir/kubeconfig: cluster \"x\" (of context \"a\") not found; available clusters: (none)");
  expect_error("current-context: a\ncontexts: {a: 1}\n", NULL,
               "/cfg/dir/kubeconfig:2:11: contexts: expected a list, found a mapping");
  expect_error("current-context: a\ncontexts:\n- just-a-string\n", NULL,
               "/cfg/dir/kubeconfig:3:3: contexts[0]: expected a mapping with name and context, found a scalar");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: [x]}\n", NULL,
               "/cfg/dir/kubeconfig:4:22: contexts[0].context.cluster: expected a string, found a list");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\n"
               "clusters:\n- name: x\n  cluster:\n    insecure-skip-tls-verify: maybe\n    server: https://h\n",
               NULL,
               "/cfg/dir/kubeconfig:8:31: clusters[0].cluster.insecure-skip-tls-verify: expected true or "
               "false, found \"maybe\"");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\n"
               "clusters:\n- name: x\n  cluster: {certificate-authority-data: abc}\n",
               NULL,
               "/cfg/dir/kubeconfig:7:12: clusters[0].cluster: expected a server URL (https://host:port), found nothing");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\n"
               "clusters:\n- name: x\n  cluster: {server: 'ftp://h'}\n",
               NULL,
               "/cfg/dir/kubeconfig:7:21: clusters[0].cluster.server: server must start with https:// or http://, found \"ftp://h\"");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\n"
               "clusters:\n- name: x\n  cluster:\n    server: https://h\n    certificate-authority-data: 'ab$d'\n",
               NULL,
               "/cfg/dir/kubeconfig:9: clusters[0].cluster.certificate-authority-data: not valid base64: unexpected '$' at offset 2");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x, user: u}\n"
               "clusters:\n- name: x\n  cluster: {server: 'https://h'}\n"
               "users:\n- name: u\n  user: {client-certificate-data: Q0VSVA==}\n",
               NULL,
               "/cfg/dir/kubeconfig:10:9: users[0].user: client-certificate is set but client-key is missing");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x, user: u}\n"
               "clusters:\n- name: x\n  cluster: {server: 'https://h'}\n"
               "users:\n- name: v\n  user: {}\n",
               NULL,
               "/cfg/dir/kubeconfig: user \"u\" (of context \"a\") not found; available users: v");
  expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: x, user: u}\n"
               "clusters:\n- name: x\n  cluster: {server: 'https://h'}\n"
               "users:\n- name: u\n  user:\n    exec: {command: aws}\n",
               NULL,
               "/cfg/dir/kubeconfig:11:11: users[0].user: exec credential plugins are not supported; use "
               "token, tokenFile or a client certificate");
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  assert_false(po_KubeConfig_LoadFiles("/nonexistent/po-kube-config", NULL, &c, &st));
  assert_string_equal(st.message, "/nonexistent/po-kube-config: cannot open: No such file or directory");
}

static void write_file(const char *dir, const char *name, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_in_cluster_token_rotation(void **state) {
  char dir[] = "/tmp/po-kube-sa-XXXXXX";
  assert_non_null(mkdtemp(dir));
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  unsetenv("KUBERNETES_SERVICE_HOST");
  assert_false(po_KubeConfig_InCluster(dir, &c, &st));
  assert_string_equal(st.message,
                      "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set");
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  assert_false(po_KubeConfig_InCluster(dir, &c, &st));
  assert_true(strstr(st.message, "ca.crt: in-cluster CA file is not readable") != NULL);
  write_file(dir, "ca.crt", "PEM");
  assert_false(po_KubeConfig_InCluster(dir, &c, &st));
  assert_true(strstr(st.message, "token: in-cluster token file is not readable") != NULL);
  write_file(dir, "token", "tok-1\n");
  write_file(dir, "namespace", "my-ns\n");
  assert_true(po_KubeConfig_InCluster(dir, &c, &st));
  assert_true(po_KubeConfig_IsInCluster(c));
  assert_string_equal(po_KubeConfig_Server(c), "https://10.0.0.1:443");
  assert_string_equal(po_KubeConfig_Namespace(c), "my-ns");
  char ca[512];
  snprintf(ca, sizeof ca, "%s/ca.crt", dir);
  assert_string_equal(po_KubeConfig_CaFile(c), ca);
  char tok[64];
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "tok-1");
  /* Rotation as the kubelet does it: a new file renamed over the old one. */
  write_file(dir, "token.new", "tok-2-longer");
  char a[512], b[512];
  snprintf(a, sizeof a, "%s/token.new", dir);
  snprintf(b, sizeof b, "%s/token", dir);
  assert_int_equal(rename(a, b), 0);
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "tok-2-longer");
  /* Briefly missing during a rotation: the last token stays in use. */
  unlink(b);
  assert_true(po_KubeConfig_Token(c, tok, sizeof tok, &st));
  assert_string_equal(tok, "tok-2-longer");
  po_KubeConfig_Free(c);
  /* IPv6 service address; no namespace file -> default. */
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  write_file(dir, "token", "t");
  snprintf(a, sizeof a, "%s/namespace", dir);
  unlink(a);
  assert_true(po_KubeConfig_InCluster(dir, &c, &st));
  assert_string_equal(po_KubeConfig_Server(c), "https://[fd00::1]:443");
  assert_string_equal(po_KubeConfig_Namespace(c), "default");
  po_KubeConfig_Free(c);
  /* Load() picks in-cluster when the env is set and no kubeconfig is given. */
  unsetenv("KUBECONFIG");
  po_KubeConfigOptions o = {NULL, NULL, dir};
  assert_true(po_KubeConfig_Load(&o, &c, &st));
  assert_true(po_KubeConfig_IsInCluster(c));
  po_KubeConfig_Free(c);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  unlink(b);
  unlink(ca);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_full_file_current_context),
      cmocka_unit_test(test_full_file_explicit_context_data_forms),
      cmocka_unit_test(test_token_file_and_insecure),
      cmocka_unit_test(test_kubeconfig_env_merge),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_in_cluster_token_rotation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
