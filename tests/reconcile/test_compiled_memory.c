/* The memory a compiled PropertyOverride keeps (compiled.h): one po_CompiledEntry is kept per
 * PropertyOverride for its whole life, so at 100,000 it is a large part of the controller's
 * memory per PropertyOverride (issue 26: at most 4 KB each above a fixed base, all of it). 1,000
 * entries of the benchmark's PropertyOverride (one patch, 290 bytes of spec JSON) are made and
 * kept, and the heap they hold is read from glibc's own count (mallinfo2: in-use bytes, exact and
 * deterministic in one thread; not RSS, not timed). They held 5,418 bytes each: a 920-byte entry
 * (a 600-byte key buffer), the Consul arguments as a value tree beside their text (~1 KB), and an
 * arena grown by doubling; 3,222 with the arena fitted (po_Arena_NewFitted), the arguments made in
 * a scratch arena and the spec's lists and maps sized once; 1,808 with the spec's value tree made
 * in that scratch arena too (po_TargetOptions.spec_arena) and only the patches' strings and values
 * copied out of it (po_Arguments_Adopt: the tree was 1.8 KB of the arena). Not under valgrind or the sanitizers,
 * whose allocators glibc does not count. */
#include <json-c/json.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"

enum { kEntries = 1000 };

static json_object *bench_override(int i) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"name\":\"po-%04d\","
           "\"namespace\":\"default\",\"uid\":\"00000000-0000-4000-8000-%012d\",\"generation\":1},\"spec\":{\"debug\":false,"
           "\"patches\":[{\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"resourceFilter\":"
           "{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"value\":%d}],\"priority\":0,\"proxyType\":"
           "\"connect-proxy\",\"required\":false,\"targetRef\":{\"kind\":\"ServiceDefaults\",\"name\":\"svc-%03d\"}}}",
           i, i, 1 + i % 99, i % 200);
  return json_tokener_parse(text);
}

static void test_compiled_entry_bytes(void **state) {
  (void)state;
  static const po_CompiledEntry *kept[kEntries];
  json_object *warm = bench_override(0); /* the schema and the mesh tables: loaded once, not per entry */
  bool oom;
  po_ArenaFit fit = {0}; /* one index's: its compiles learn the arena size together */
  int64_t gen;
  po_JsonHash hash;
  assert_true(po_CompiledEntry_KeyOf(warm, kPo_CompileWhich_Current, &gen, &hash));
  po_CompiledEntry_Release(po_CompiledEntry_Make(warm, kPo_CompileWhich_Current, "w", gen, hash, NULL, &fit, &oom));
  json_object_put(warm);
  size_t before = mallinfo2().uordblks, spec = 0;
  for (int i = 0; i < kEntries; i++) {
    json_object *o = bench_override(i);
    spec += strlen(json_object_to_json_string_ext(json_object_object_get(o, "spec"), JSON_C_TO_STRING_PLAIN));
    assert_true(po_CompiledEntry_KeyOf(o, kPo_CompileWhich_Current, &gen, &hash));
    char uid[64];
    snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012d", i);
    kept[i] = po_CompiledEntry_Make(o, kPo_CompileWhich_Current, uid, gen, hash, NULL, &fit, &oom);
    assert_non_null(kept[i]);
    assert_true(kept[i]->c.accepted);
    json_object_put(o);
  }
  size_t held = mallinfo2().uordblks - before, per = held / kEntries;
  print_message("compiled: %d entries hold %zu bytes, %zu each (spec JSON %zu bytes each; entry %zu, arena footprint "
                "of the last %zu)\n", kEntries, held, per, spec / kEntries, sizeof(po_CompiledEntry),
                po_Arena_Footprint(kept[kEntries - 1]->arena));
  for (int i = 0; i < kEntries; i++) po_CompiledEntry_Release(kept[i]);
  assert_true(per <= 2200);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_compiled_entry_bytes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
