/* JSON log lines parsed back with json-c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/runtime/log.h"

static int64_t pinned_ms(void) { return INT64_C(1796154914123); } /* 2026-12-01T19:55:14.123Z */

/* Reads every line written to f, parsed. */
static int read_lines(FILE *f, json_object **out, int max) {
  rewind(f);
  char line[4096];
  int n = 0;
  while (n < max && fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    assert_true(len > 0 && line[len - 1] == '\n'); /* one object per line */
    out[n] = json_tokener_parse(line);
    assert_non_null(out[n]);
    n++;
  }
  return n;
}

static const char *str(json_object *o, const char *key) {
  json_object *v;
  if (!json_object_object_get_ex(o, key, &v)) return NULL;
  return json_object_get_string(v);
}

static void lines_have_ts_level_logger_msg_and_fields(void **state) {
  FILE *f = tmpfile();
  po_Logger *root = po_Logger_New(&(po_LoggerOptions){.out = f, .level = kPo_LogLevel_Info,
                                                      .name = "propertyoverride",
                                                      .wall_ms = pinned_ms});
  po_Logger *ctrl = po_Logger_Named(root, "controller");
  po_Logger *bound = po_Logger_With(ctrl, po_Str("controller", "po"), po_Int("worker", 2));
  po_Log_Info(bound, "reconciled", po_Str("key", "default/web"), po_Int("duration_ms", 3),
              po_Double("ratio", 0.5), po_Bool("changed", 1), po_Str("none", NULL));
  po_Log_Debug(bound, "dropped: below the level");
  po_Log_Error(root, "quote \" backslash \\ newline \n tab \t unicode é </script>");
  po_Logger_SetLevel(root, kPo_LogLevel_Debug);
  po_Log_Debug(ctrl, "now visible");
  po_Log_Warn(NULL, "a NULL logger writes nothing");
  json_object *l[8];
  int n = read_lines(f, l, 8);
  assert_int_equal(n, 3);
  assert_string_equal(str(l[0], "ts"), "2026-12-01T19:55:14.123Z");
  assert_string_equal(str(l[0], "level"), "info");
  assert_string_equal(str(l[0], "logger"), "propertyoverride.controller");
  assert_string_equal(str(l[0], "msg"), "reconciled");
  assert_string_equal(str(l[0], "controller"), "po");
  assert_string_equal(str(l[0], "key"), "default/web");
  json_object *v;
  assert_true(json_object_object_get_ex(l[0], "duration_ms", &v));
  assert_true(json_object_is_type(v, json_type_int));
  assert_int_equal(json_object_get_int64(v), 3);
  assert_true(json_object_object_get_ex(l[0], "worker", &v));
  assert_int_equal(json_object_get_int64(v), 2);
  assert_true(json_object_object_get_ex(l[0], "ratio", &v));
  assert_true(json_object_get_double(v) == 0.5);
  assert_true(json_object_object_get_ex(l[0], "changed", &v));
  assert_true(json_object_get_boolean(v));
  assert_true(json_object_object_get_ex(l[0], "none", &v));
  assert_null(v);
  assert_string_equal(str(l[1], "level"), "error");
  assert_string_equal(str(l[1], "logger"), "propertyoverride");
  assert_string_equal(str(l[1], "msg"), "quote \" backslash \\ newline \n tab \t unicode é </script>");
  assert_string_equal(str(l[2], "level"), "debug");
  assert_string_equal(str(l[2], "msg"), "now visible");
  for (int i = 0; i < n; i++) json_object_put(l[i]);
  po_Logger_Free(bound);
  po_Logger_Free(ctrl);
  po_Logger_Free(root);
  fclose(f);
}

static void field_order_starts_with_ts_level_logger_msg(void **state) {
  FILE *f = tmpfile();
  po_Logger *root = po_Logger_New(&(po_LoggerOptions){.out = f, .level = kPo_LogLevel_Info,
                                                      .wall_ms = pinned_ms});
  po_LogField fields[] = {{.key = "a", .type = kPo_LogField_Int, .i = -7}};
  po_Log_WriteFields(root, kPo_LogLevel_Warn, "m", fields, 1);
  rewind(f);
  char line[256];
  assert_non_null(fgets(line, sizeof line, f));
  /* No logger name: the field is left out. */
  assert_string_equal(line, "{\"ts\":\"2026-12-01T19:55:14.123Z\",\"level\":\"warn\",\"msg\":\"m\",\"a\":-7}\n");
  po_Logger_Free(root);
  fclose(f);
}

static void levels_parse_and_filter(void **state) {
  po_LogLevel l;
  assert_true(po_LogLevel_Parse("debug", &l) && l == kPo_LogLevel_Debug);
  assert_true(po_LogLevel_Parse("INFO", &l) && l == kPo_LogLevel_Info);
  assert_true(po_LogLevel_Parse("warning", &l) && l == kPo_LogLevel_Warn);
  assert_true(po_LogLevel_Parse("error", &l) && l == kPo_LogLevel_Error);
  assert_false(po_LogLevel_Parse("verbose", &l));
  assert_false(po_LogLevel_Parse(NULL, &l));
  po_Logger *root = po_Logger_New(&(po_LoggerOptions){.out = stderr, .level = kPo_LogLevel_Warn});
  assert_false(po_Logger_Enabled(root, kPo_LogLevel_Info));
  assert_true(po_Logger_Enabled(root, kPo_LogLevel_Warn));
  assert_int_equal(po_Logger_Level(root), kPo_LogLevel_Warn);
  po_Logger_Free(root);
  char buf[32];
  assert_string_equal(po_Log_FormatTime(0, buf), "1970-01-01T00:00:00.000Z");
  assert_string_equal(po_Log_FormatTime(-1, buf), "1969-12-31T23:59:59.999Z");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lines_have_ts_level_logger_msg_and_fields),
      cmocka_unit_test(field_order_starts_with_ts_level_logger_msg),
      cmocka_unit_test(levels_parse_and_filter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
