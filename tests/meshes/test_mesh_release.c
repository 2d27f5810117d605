/* Each mesh's release table (po/targets/release.h, controller/meshes/<mesh>/src/<mesh>_releases.c)
 * and `MESH[@RELEASE]` (po_Mesh_ParseChoice): the releases each mesh lists and the snapshot
 * judging each, the parser's answers and its exact errors (as data: kCases), and a compile
 * judging each target by its mesh release's snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "po/meshes/istio.h"
#include "po/meshes/mesh.h"
#include "po/targets/release.h"

/* Which release each mesh runs, which snapshot judges it (issue 24's table). */
static const struct {
  const char *mesh, *release, *api;
} kTable[] = {
    {"consul", "1.21", "v1.32.4"},        {"consul", "1.22", "v1.32.4"},        {"istio", "1.26", "v1.32.4"},
    {"istio", "1.27", "v1.32.4"},         {"istio", "1.28", "v1.37.0"},         {"istio", "1.29", "v1.37.0"},
    {"istio", "1.30", "v1.37.0"},         {"istio", "1.31", "v1.37.0"},         {"envoy-gateway", "1.5", "v1.32.4"},
    {"envoy-gateway", "1.6", "v1.37.0"},  {"envoy-gateway", "1.7", "v1.37.0"},  {"envoy-gateway", "1.8", "v1.37.0"},
    {"envoy-gateway", "1.9", "v1.37.0"},
};

/* text -> the release chosen (NULL: refused) and whether it was the default, or the error */
static const struct {
  const char *text, *release;
  bool defaulted;
  const char *error;
} kCases[] = {
    {"istio@1.30", "1.30", false, NULL},
    {"istio@1.30.2", "1.30", false, NULL},
    {"istio@v1.31", "1.31", false, NULL},
    {"consul@1.22", "1.22", false, NULL},
    {"consul@1.21.4", "1.21", false, NULL},
    {"envoy-gateway@1.9", "1.9", false, NULL},
    {"envoy-gateway@v1.5.0", "1.5", false, NULL},
    /* what meshes report on a prerelease or a vendor's build: its release line's (adv-24) */
    {"istio@1.30.0-beta.0", "1.30", false, NULL},
    {"istio@1.31-dev", "1.31", false, NULL},
    {"istio@1.26.3-asm.1", "1.26", false, NULL},
    {"consul@1.22.0+ent", "1.22", false, NULL},
    {"envoy-gateway@v1.9.0-rc.1", "1.9", false, NULL},
    {"istio", "1.31", true, NULL},
    {"consul", "1.22", true, NULL},
    {"envoy-gateway", "1.9", true, NULL},
    {"kuma@2.12", NULL, false,
     "unknown mesh 'kuma': one of consul, istio, envoy-gateway is expected, optionally with @RELEASE (istio@1.30)"},
    {"", NULL, false,
     "unknown mesh '': one of consul, istio, envoy-gateway is expected, optionally with @RELEASE (istio@1.30)"},
    {"Istio@1.30", NULL, false,
     "unknown mesh 'Istio': one of consul, istio, envoy-gateway is expected, optionally with @RELEASE (istio@1.30)"},
    {"envoygateway@1.9", NULL, false,
     "unknown mesh 'envoygateway': one of consul, istio, envoy-gateway is expected, optionally with @RELEASE "
     "(istio@1.30)"},
    {"istio@", NULL, false,
     "'' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, 1.29, "
     "1.30, 1.31 (default 1.31)"},
    {"istio@1", NULL, false,
     "'1' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, 1.29, "
     "1.30, 1.31 (default 1.31)"},
    {"istio@1.30.2.1", NULL, false,
     "'1.30.2.1' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, "
     "1.29, 1.30, 1.31 (default 1.31)"},
    {"istio@1.30.0-", NULL, false,
     "'1.30.0-' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, "
     "1.29, 1.30, 1.31 (default 1.31)"},
    {"istio@1-beta", NULL, false,
     "'1-beta' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, "
     "1.29, 1.30, 1.31 (default 1.31)"},
    {"istio@1.30.0-beta 1", NULL, false,
     "'1.30.0-beta 1' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, "
     "1.28, 1.29, 1.30, 1.31 (default 1.31)"},
    {"istio@1.25.0-beta.1", NULL, false,
     "Istio 1.25.0-beta.1 is not a release this build knows; istio's releases: 1.26, 1.27, 1.28, 1.29, 1.30, 1.31 "
     "(default 1.31)"},
    {"istio@1.30@1.31", NULL, false,
     "'1.30@1.31' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; istio's releases: 1.26, 1.27, 1.28, "
     "1.29, 1.30, 1.31 (default 1.31)"},
    {"istio@1.25", NULL, false,
     "Istio 1.25 is not a release this build knows; istio's releases: 1.26, 1.27, 1.28, 1.29, 1.30, 1.31 (default 1.31)"},
    {"consul@1.20.5", NULL, false, "Consul 1.20.5 is not a release this build knows; consul's releases: 1.21, 1.22 (default 1.22)"},
    {"envoy-gateway@v1.4", NULL, false,
     "Envoy Gateway 1.4 is not a release this build knows; envoy-gateway's releases: 1.5, 1.6, 1.7, 1.8, 1.9 (default 1.9)"},
};

static void test_parse_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    po_MeshChoice c;
    po_CtlStatus st;
    po_CtlStatus_Clear(&st);
    bool ok = po_Mesh_ParseChoice(kCases[i].text, &c, &st);
    if (ok != (kCases[i].release != NULL)) fail_msg("'%s': %s (%s)", kCases[i].text, ok ? "accepted" : "refused", st.message);
    if (!ok) {
      assert_int_equal(st.code, kPo_Ctl_Usage);
      if (strcmp(st.message, kCases[i].error)) fail_msg("'%s':\n got  %s\n want %s", kCases[i].text, st.message, kCases[i].error);
      continue;
    }
    assert_string_equal(c.release->release, kCases[i].release);
    assert_int_equal(c.defaulted, kCases[i].defaulted);
    const char *at = strchr(kCases[i].text, '@');
    size_t n = at ? (size_t)(at - kCases[i].text) : strlen(kCases[i].text);
    assert_int_equal(strlen(po_Mesh_Name(c.mesh->mesh)), n);
    assert_memory_equal(po_Mesh_Name(c.mesh->mesh), kCases[i].text, n);
  }
}

/* One parser of a release text (adv-24: --istio-version refused "1.30.0-beta.0", which --mesh
 * istio@ read as 1.30): po_Istio_ParseVersion, behind --istio-version and the controller's
 * detection, answers as po_Mesh_ParseChoice does for every istio@ case above, and the same for
 * texts of other majors. */
static void test_istio_version_reads_as_mesh_choice(void **state) {
  (void)state;
  size_t istio_cases = 0;
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    if (strncmp(kCases[i].text, "istio@", 6)) continue;
    const char *rel = kCases[i].text + 6;
    int minor = po_Istio_ParseVersion(rel), want = -1;
    if (po_MeshRelease_Valid(rel)) sscanf(rel + (*rel == 'v'), "1.%d", &want);
    if (minor != want) fail_msg("'%s': po_Istio_ParseVersion %d, the release parser's line 1.%d", rel, minor, want);
    if (kCases[i].release) assert_int_equal(minor, po_Istio_ParseVersion(kCases[i].release));
    istio_cases++;
  }
  assert_true(istio_cases >= 12);
  static const struct {
    const char *text;
    int minor;
  } kMore[] = {{"1.30.0-beta.0", 30}, {"1.31.1+vendor.2", 31}, {"v1.28", 28}, {"1.35", 35},  {"2.0", -1},
               {"1.x", -1},           {"1.30.0-", -1},        {"1", -1},     {"", -1},     {"1.30 ", -1}};
  for (size_t i = 0; i < sizeof kMore / sizeof kMore[0]; i++) {
    if (po_Istio_ParseVersion(kMore[i].text) != kMore[i].minor) {
      fail_msg("'%s': %d, want %d", kMore[i].text, po_Istio_ParseVersion(kMore[i].text), kMore[i].minor);
    }
  }
  assert_int_equal(po_Istio_ParseVersion(NULL), -1);
}

/* Each mesh's table is exactly kTable's rows for it, oldest first, its default the newest; each
 * row says what the release pins and where that was read. */
static void test_tables(void **state) {
  (void)state;
  size_t seen = 0;
  for (size_t m = 0; m < po_Mesh_Count(); m++) {
    const po_MeshOps *ops = po_Mesh_At(m);
    const po_MeshReleases *t = ops->releases;
    assert_non_null(t);
    assert_true(t->count > 0);
    assert_ptr_equal(po_MeshReleases_Default(t), &t->rows[t->count - 1]);
    for (size_t i = 0; i < t->count; i++) {
      const po_MeshRelease *r = &t->rows[i];
      assert_true(po_MeshRelease_Valid(r->release));
      assert_non_null(strstr(r->pins, "github.com/envoyproxy/go-control-plane"));
      assert_true(strlen(r->source) > 0);
      bool found = false;
      for (size_t k = 0; k < sizeof kTable / sizeof kTable[0]; k++) {
        if (strcmp(kTable[k].mesh, po_Mesh_Name(ops->mesh)) || strcmp(kTable[k].release, r->release)) continue;
        assert_string_equal(r->api, kTable[k].api);
        found = true;
      }
      if (!found) fail_msg("%s %s is not in kTable", ops->name, r->release);
      assert_ptr_equal(po_MeshReleases_Find(t, r->release), r);
      seen++;
    }
  }
  assert_int_equal(seen, sizeof kTable / sizeof kTable[0]);
}

/* The rows an unknown field's hint names (po_Mesh_ApiReleases): each mesh's table whole, in its
 * order, each with its row's snapshot; every mesh's together (they fit its fixed store). */
static void test_api_releases(void **state) {
  (void)state;
  size_t all = 0;
  for (size_t m = 0; m < po_Mesh_Count(); m++) {
    const po_MeshOps *ops = po_Mesh_At(m);
    const po_ApiReleases *r = po_Mesh_ApiReleases(ops->mesh);
    assert_non_null(r);
    assert_string_equal(r->mesh, po_Mesh_Name(ops->mesh));
    assert_int_equal(r->count, ops->releases->count);
    for (size_t i = 0; i < r->count; i++) {
      assert_string_equal(r->rows[i].release, ops->releases->rows[i].release);
      assert_ptr_equal(r->rows[i].api, po_MeshRelease_Api(&ops->releases->rows[i]));
      assert_ptr_equal(&po_Mesh_AllApiReleases()->rows[all + i], &r->rows[i]);
    }
    all += r->count;
  }
  assert_int_equal(all, sizeof kTable / sizeof kTable[0]);
  assert_int_equal(po_Mesh_AllApiReleases()->count, all);
  assert_null(po_Mesh_AllApiReleases()->mesh);
  assert_null(po_Mesh_ApiReleases((po_Mesh)kPo_MeshSlots));
}

/* Every row names a snapshot this build embeds (po_MeshRelease_Api falls back to the default only
 * for a build without it). */
static void test_rows_name_embedded_snapshots(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; i++) {
    const po_EnvoyApi *api = po_EnvoyApi_Find(kTable[i].api);
    assert_non_null(api);
    char text[64];
    snprintf(text, sizeof text, "%s@%s", kTable[i].mesh, kTable[i].release);
    po_MeshChoice c;
    po_CtlStatus st;
    assert_true(po_Mesh_ParseChoice(text, &c, &st));
    assert_ptr_equal(po_MeshRelease_Api(c.release), api);
  }
}

static json_object *override_of(const char *kind, const char *group, const char *target) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"generation\":1},\"spec\":{\"targetRef\":{\"group\":"
           "\"%s\",\"kind\":\"%s\",\"name\":\"%s\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
           "\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":\"/respect_dns_ttl\",\"value\":true}]}}",
           group, kind, target);
  return json_tokener_parse(text);
}

/* A compile judges each target by its mesh's release: the default release when none is named, the
 * named one otherwise, or the snapshot named directly (options.api); the override keeps it. */
static void test_compile_uses_the_mesh_release(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  json_object *istio = override_of("Service", "", "web"), *consul = override_of("ServiceDefaults", "consul.hashicorp.com", "web");
  po_CompiledOverride c;
  assert_int_equal(po_CompiledOverride_FromObject(istio, NULL, a, &c), kPo_CompileOutcome_Accepted);
  assert_true(c.accepted);
  const po_MeshRelease *def = po_MeshReleases_Default(po_Mesh_Ops(kPo_Mesh_Istio)->releases);
  assert_ptr_equal(c.release, def);
  assert_ptr_equal(c.api, po_MeshRelease_Api(def));
  assert_ptr_equal(po_Override_Api(c.override), c.api);
  po_TargetOptions o = {0};
  o.release[kPo_Mesh_Istio] = po_MeshReleases_Find(po_Mesh_Ops(kPo_Mesh_Istio)->releases, "1.26");
  assert_int_equal(po_CompiledOverride_FromObject(istio, &o, a, &c), kPo_CompileOutcome_Accepted);
  assert_string_equal(c.release->release, "1.26");
  assert_ptr_equal(po_Override_Api(c.override), po_MeshRelease_Api(c.release));
  /* the Consul target keeps Consul's default release whatever Istio's is */
  assert_int_equal(po_CompiledOverride_FromObject(consul, &o, a, &c), kPo_CompileOutcome_Accepted);
  assert_string_equal(c.release->release, "1.22");
  assert_ptr_equal(po_Override_Api(c.override), po_EnvoyApi_Default());
  /* a snapshot named directly wins over the release's */
  o.api[kPo_Mesh_Istio] = po_EnvoyApi_Newest();
  assert_int_equal(po_CompiledOverride_FromObject(istio, &o, a, &c), kPo_CompileOutcome_Accepted);
  assert_ptr_equal(po_Override_Api(c.override), po_EnvoyApi_Newest());
  json_object_put(istio);
  json_object_put(consul);
  po_Arena_Free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_cases),
      cmocka_unit_test(test_istio_version_reads_as_mesh_choice),
      cmocka_unit_test(test_tables),
      cmocka_unit_test(test_api_releases),
      cmocka_unit_test(test_rows_name_embedded_snapshots),
      cmocka_unit_test(test_compile_uses_the_mesh_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
