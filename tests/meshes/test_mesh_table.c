/* The mesh table (po/meshes/mesh.h, po/meshes/list.h) and the headers of the mesh layer.
 *
 * Every public header of controller/targets and controller/meshes is included twice: a header
 * whose include guard closes early (istio.h did, leaving its plan aliases outside it) fails this
 * file's compile with a redeclaration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/eg.h"
#include "po/meshes/istio.h"
#include "po/meshes/mesh.h"
#include "po/targets/any_type.h"
#include "po/targets/mesh_ops.h"
#include "po/targets/native_error.h"
#include "po/targets/override.h"
#include "po/targets/owned.h"
#include "po/targets/release.h"
#include "po/targets/target_kind.h"
#include "po/targets/tenancy.h"
#include "po/targets/text.h"
/* twice */
#include "po/meshes/consul.h"
#include "po/meshes/consul_check.h"
#include "po/meshes/eg.h"
#include "po/meshes/istio.h"
#include "po/meshes/mesh.h"
#include "po/targets/any_type.h"
#include "po/targets/mesh_ops.h"
#include "po/targets/native_error.h"
#include "po/targets/override.h"
#include "po/targets/owned.h"
#include "po/targets/release.h"
#include "po/targets/target_kind.h"
#include "po/targets/tenancy.h"
#include "po/targets/text.h"

/* The list, expanded here as the table expands it: each row's po_Mesh. */
static const po_Mesh kListed[] = {
#define PO_MESH(id, row, reconcile) id,
#include "po/meshes/list.h"
#undef PO_MESH
};
enum { kListedCount = sizeof kListed / sizeof kListed[0] };

/* Each listed mesh has its own row, saying which mesh it is, with a name; a mesh with an object
 * per PropertyOverride names both its kind and how it is named. */
static void test_every_listed_mesh_has_its_row(void **state) {
  (void)state;
  assert_int_equal(kListedCount, 3);
  for (size_t i = 0; i < kListedCount; i++) {
    const po_MeshOps *m = po_Mesh_Ops(kListed[i]);
    assert_non_null(m);
    assert_int_equal(m->mesh, kListed[i]);
    assert_non_null(m->name);
    assert_true((m->object_kind == NULL) == (m->object_name == NULL));
    assert_non_null(m->render);
    /* a hand-written object has a group, a patch list and a check, and is found by them */
    assert_true((m->native_kind == NULL) == (m->check_native == NULL));
    if (m->native_kind) {
      assert_non_null(m->native_group);
      assert_non_null(m->native_patches);
      assert_ptr_equal(po_Mesh_ForNative(m->native_group, m->native_kind), m);
    }
    assert_ptr_equal(po_Mesh_At(i), m);
    for (size_t k = 0; k < i; k++) assert_ptr_not_equal(po_Mesh_Ops(kListed[k]), m);
  }
}

/* The objects written by hand each mesh checks, by API group and kind; nothing else. */
static void test_native_objects_by_group_and_kind(void **state) {
  (void)state;
  assert_int_equal(po_Mesh_Count(), kListedCount);
  assert_int_equal(po_Mesh_ForNative("networking.istio.io", "EnvoyFilter")->mesh, kPo_Mesh_Istio);
  assert_int_equal(po_Mesh_ForNative("gateway.envoyproxy.io", "EnvoyPatchPolicy")->mesh, kPo_Mesh_EnvoyGateway);
  assert_null(po_Mesh_ForNative("networking.istio.io", "EnvoyPatchPolicy"));
  assert_null(po_Mesh_ForNative("consul.hashicorp.com", "ServiceDefaults"));
  assert_null(po_Mesh_ForNative(NULL, "EnvoyFilter"));
  assert_null(po_Mesh_At(kListedCount));
}

/* Every target kind is programmed by a mesh of the list. */
static void test_every_target_kind_has_a_listed_mesh(void **state) {
  (void)state;
  for (int k = kPo_TargetKind_ServiceDefaults; k <= kPo_TargetKind_Gateway; k++) {
    po_Mesh m = po_TargetKind_Mesh((po_TargetKind)k);
    bool listed = false;
    for (size_t i = 0; i < kListedCount; i++) listed |= kListed[i] == m;
    assert_true(listed);
    assert_int_equal(po_Mesh_Ops(m)->mesh, m);
    po_TargetKind back;
    assert_true(po_TargetKind_Parse(po_TargetKind_Name((po_TargetKind)k), &back));
    assert_int_equal(back, k);
  }
  po_TargetKind none;
  assert_false(po_TargetKind_Parse("EnvoyFilter", &none));
  assert_false(po_TargetKind_Parse(NULL, &none));
}

/* The compile reaches the mesh's refusals through the table: an Istio target refuses a remove
 * (po_Istio_Check), the same patch on a Consul target is accepted; and the object-name bound
 * (po_Target_Check) holds for the meshes with an object of their own only. */
static json_object *override_of(const char *kind, const char *group, const char *name, const char *op) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"generation\":1},\"spec\":{\"targetRef\":{\"group\":"
           "\"%s\",\"kind\":\"%s\",\"name\":\"%s\"},\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\","
           "\"trafficDirection\":\"outbound\"},\"op\":\"%s\",\"path\":\"/respect_dns_ttl\"%s}]}}",
           name, group, kind, strcmp(kind, "Gateway") ? "web" : "gw", op,
           strcmp(op, "add") ? "" : ",\"value\":true");
  return json_tokener_parse(text);
}

static void test_compile_asks_the_targets_mesh(void **state) {
  (void)state;
  po_Arena *a = po_Arena_New();
  json_object *consul = override_of("ServiceDefaults", "consul.hashicorp.com", "p", "remove");
  json_object *istio = override_of("Service", "", "p", "remove");
  po_CompiledOverride c;
  assert_int_equal(po_CompiledOverride_FromObject(consul, NULL, a, &c), kPo_CompileOutcome_Accepted);
  assert_true(c.accepted);
  assert_non_null(c.consul_arguments); /* the wire-typed mesh's arguments */
  assert_int_equal(po_CompiledOverride_FromObject(istio, NULL, a, &c), kPo_CompileOutcome_Refused);
  assert_false(c.accepted);
  assert_null(c.consul_arguments);
  char longname[240];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  json_object *long_istio = override_of("Service", "", longname, "add");
  json_object *long_consul = override_of("ServiceDefaults", "consul.hashicorp.com", longname, "add");
  assert_int_equal(po_CompiledOverride_FromObject(long_istio, NULL, a, &c), kPo_CompileOutcome_Refused);
  assert_false(c.accepted);
  const char *why = po_CompiledOverride_Describe(&c, true, false, 0, a);
  if (!strstr(why ? why : "", "the EnvoyFilter is named propertyoverride-<name>")) fprintf(stderr, "%s\n", why ? why : "(none)");
  assert_non_null(strstr(why, "the EnvoyFilter is named propertyoverride-<name>"));
  assert_int_equal(po_CompiledOverride_FromObject(long_consul, NULL, a, &c), kPo_CompileOutcome_Accepted);
  assert_true(c.accepted);
  json_object_put(consul);
  json_object_put(istio);
  json_object_put(long_istio);
  json_object_put(long_consul);
  po_Arena_Free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_listed_mesh_has_its_row),
      cmocka_unit_test(test_native_objects_by_group_and_kind),
      cmocka_unit_test(test_every_target_kind_has_a_listed_mesh),
      cmocka_unit_test(test_compile_asks_the_targets_mesh),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
