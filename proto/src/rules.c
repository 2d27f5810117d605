/* Field and oneof annotations: protoc-gen-validate rules, a oneof's validate.required, and
 * deprecation.
 *
 * The generated descriptor.upb.h does not know the validate.rules extension (1071 on
 * FieldOptions), so upb keeps it as unknown bytes. Re-encoding the options and decoding them as
 * the pool's own FieldOptions, with the pool's extension registry, turns those bytes into a
 * typed validate.FieldRules message; a oneof's options the same way (validate.required, 1071 on
 * OneofOptions). */
#include "google/protobuf/descriptor.upb.h"
#include "schema_internal.h"
#include "upb/decode.h"
#include "upb/reflection.h"

const upb_Message *po_Schema_FieldRules(const po_Schema *s, const upb_FieldDef *f,
                                        upb_Arena *arena, const upb_MessageDef **rules_def) {
  if (!upb_FieldDef_HasOptions(f)) return NULL;
  po_Schema_NeedRules_(s);
  if (!s->rules_ext || !s->field_options) return NULL;
  size_t len = 0;
  char *bytes = google_protobuf_FieldOptions_serialize(upb_FieldDef_Options(f), arena, &len);
  if (!bytes || len == 0) return NULL;
  upb_Message *opts = upb_Message_New(s->field_options, arena);
  if (!opts) return NULL;
  if (upb_Decode(bytes, len, opts, upb_MessageDef_MiniTable(s->field_options),
                 upb_DefPool_ExtensionRegistry(s->pool), 0, arena) != kUpb_DecodeStatus_Ok) {
    return NULL;
  }
  if (!upb_Message_Has(opts, s->rules_ext)) return NULL;
  if (rules_def) *rules_def = upb_FieldDef_MessageSubDef(s->rules_ext);
  return upb_Message_Get(opts, s->rules_ext).msg_val;
}

bool po_Schema_OneofRequired(const po_Schema *s, const upb_OneofDef *o, upb_Arena *arena) {
  if (!upb_OneofDef_HasOptions(o)) return false;
  po_Schema_NeedRules_(s);
  if (!s->required_ext || !s->oneof_options) return false;
  size_t len = 0;
  char *bytes = google_protobuf_OneofOptions_serialize(upb_OneofDef_Options(o), arena, &len);
  if (!bytes || len == 0) return false;
  upb_Message *opts = upb_Message_New(s->oneof_options, arena);
  if (!opts || upb_Decode(bytes, len, opts, upb_MessageDef_MiniTable(s->oneof_options),
                          upb_DefPool_ExtensionRegistry(s->pool), 0, arena) != kUpb_DecodeStatus_Ok) {
    return false;
  }
  return upb_Message_Has(opts, s->required_ext) && upb_Message_Get(opts, s->required_ext).bool_val;
}

bool po_Schema_FieldDeprecated(const upb_FieldDef *f) {
  return upb_FieldDef_HasOptions(f) &&
         google_protobuf_FieldOptions_deprecated(upb_FieldDef_Options(f));
}
