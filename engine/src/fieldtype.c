/* How Consul (through Go's protoreflect) names field types in its error texts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

const char *po_KindName(const upb_FieldDef *f) {
  switch (upb_FieldDef_Type(f)) {
    case kUpb_FieldType_Double: return "double";
    case kUpb_FieldType_Float: return "float";
    case kUpb_FieldType_Int64: return "int64";
    case kUpb_FieldType_UInt64: return "uint64";
    case kUpb_FieldType_Int32: return "int32";
    case kUpb_FieldType_Fixed64: return "fixed64";
    case kUpb_FieldType_Fixed32: return "fixed32";
    case kUpb_FieldType_Bool: return "bool";
    case kUpb_FieldType_String: return "string";
    case kUpb_FieldType_Group: return "group";
    case kUpb_FieldType_Message: return "message";
    case kUpb_FieldType_Bytes: return "bytes";
    case kUpb_FieldType_UInt32: return "uint32";
    case kUpb_FieldType_Enum: return "enum";
    case kUpb_FieldType_SFixed32: return "sfixed32";
    case kUpb_FieldType_SFixed64: return "sfixed64";
    case kUpb_FieldType_SInt32: return "sint32";
    case kUpb_FieldType_SInt64: return "sint64";
  }
  return "unknown";
}

/* Static storage would not be thread-safe for the message-name cases, so the two-part names are
 * built from strings that live in the schema: repeated ones use a small thread-local buffer. */
const char *po_FieldType(const upb_FieldDef *f) {
  if (upb_FieldDef_IsMap(f)) return "map";
  const char *base = upb_FieldDef_IsSubMessage(f) ? upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f))
                                                  : po_KindName(f);
  if (!upb_FieldDef_IsRepeated(f)) return base;
  static _Thread_local char buf[512];
  snprintf(buf, sizeof buf, "repeated %s", base);
  return buf;
}

void po_FormatGoFloat(double d, char *buf, size_t size) {
  /* Go's %v for float64 is strconv.FormatFloat(d, 'g', -1, 64) with Go's exponent form
   * (at least two digits, explicit sign) and %e used once the exponent is < -4 or >= 21. */
  if (isnan(d)) { snprintf(buf, size, "NaN"); return; }
  if (isinf(d)) { snprintf(buf, size, d > 0 ? "+Inf" : "-Inf"); return; }
  char tmp[64];
  int prec = 1;
  for (; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
    if (strtod(tmp, NULL) == d) break;
  }
  int exp10 = d == 0 ? 0 : (int)floor(log10(fabs(d)));
  /* Re-derive the exponent from the printed form, which is exact. */
  const char *e = strchr(tmp, 'e');
  if (e) exp10 = atoi(e + 1);
  if (exp10 < -4 || exp10 >= 21) {
    char mant[64];
    size_t ml = (size_t)(e - tmp);
    memcpy(mant, tmp, ml);
    mant[ml] = '\0';
    if (strchr(mant, '.')) { /* trim trailing zeros of the mantissa */
      char *z = mant + strlen(mant) - 1;
      while (*z == '0') *z-- = '\0';
      if (*z == '.') *z = '\0';
    }
    snprintf(buf, size, "%se%c%02d", mant, exp10 < 0 ? '-' : '+', abs(exp10));
  } else {
    int decimals = prec - 1 - exp10;
    if (decimals < 0) decimals = 0;
    snprintf(buf, size, "%.*f", decimals, d);
  }
}
