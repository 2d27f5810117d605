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

/* The one-part names are strings that live in the schema; the repeated ones are built in buf. */
const char *po_FieldType(const upb_FieldDef *f, char buf[kPo_FieldTypeMax]) {
  if (upb_FieldDef_IsMap(f)) return "map";
  const char *base = upb_FieldDef_IsSubMessage(f) ? upb_MessageDef_FullName(upb_FieldDef_MessageSubDef(f))
                                                  : po_KindName(f);
  if (!upb_FieldDef_IsRepeated(f)) return base;
  snprintf(buf, kPo_FieldTypeMax, "repeated %s", base);
  return buf;
}

void po_FormatGoFloat(double d, char *buf, size_t size) {
  /* The float form of our own texts (range errors, hints): shortest digits, Go's exponent form
   * (at least two digits, explicit sign) once the exponent is < -4 or >= 21. Not fmt's %v,
   * whose exponent form starts at 1e+06: po_FormatGoFloatV prints that. */
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

/* The shortest decimal digits that read back as `d` (> 0), as Go's strconv finds them: the
 * fewest digits inside the rounding interval, the closest to `d` among those. At each length the
 * correctly rounded candidate is the closest; when it reads back as another double (the interval
 * is lopsided at a power of two), its neighbour on the other side of `d` may still be inside.
 * Writes the digits (no trailing zeros) and returns the decimal exponent of the first. */
static int shortest_digits(double d, char *digs, size_t size) {
  char tmp[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
    char *e = strchr(tmp, 'e');
    int exp10 = atoi(e + 1);
    size_t n = 0;
    for (const char *p = tmp; p < e && n + 1 < size; p++) {
      if (*p != '.') digs[n++] = *p;
    }
    digs[n] = '\0';
    bool ok = strtod(tmp, NULL) == d;
    if (!ok) { /* the neighbour one unit away in the last digit, on the far side of d */
      bool up = strtod(tmp, NULL) < d;
      char nb[32];
      memcpy(nb, digs, n + 1);
      int i = (int)n - 1;
      if (up) {
        while (i >= 0 && nb[i] == '9') nb[i--] = '0';
      } else {
        while (i >= 0 && nb[i] == '0') nb[i--] = '9';
      }
      if (i >= 0 && !(!up && i == 0 && nb[0] == '1')) { /* no carry out, no borrow to fewer digits */
        nb[i] = (char)(nb[i] + (up ? 1 : -1));
        char lit[64];
        snprintf(lit, sizeof lit, "%c.%se%d", nb[0], nb + 1, exp10);
        if (strtod(lit, NULL) == d) {
          memcpy(digs, nb, n + 1);
          ok = true;
        }
      }
    }
    if (!ok) continue;
    while (n > 1 && digs[n - 1] == '0') digs[--n] = '\0';
    return exp10;
  }
  return 0; /* not reached: 17 digits always read back */
}

void po_FormatGoFloatV(double d, char *buf, size_t size) {
  /* fmt's %v of a float64: strconv.FormatFloat(d, 'g', -1, 64). With the shortest digits 'g'
   * takes the exponent form when the exponent is < -4 or >= 6 (eprec is 6 when shortest), the
   * exponent signed and at least two digits; otherwise plain decimals, no trailing zeros. */
  if (isnan(d)) { snprintf(buf, size, "NaN"); return; }
  if (isinf(d)) { snprintf(buf, size, d > 0 ? "+Inf" : "-Inf"); return; }
  const char *sign = signbit(d) ? "-" : "";
  if (d == 0) { snprintf(buf, size, "%s0", sign); return; }
  char digs[32];
  int exp10 = shortest_digits(fabs(d), digs, sizeof digs);
  int nd = (int)strlen(digs);
  if (exp10 < -4 || exp10 >= 6) {
    snprintf(buf, size, "%s%c%s%se%c%02d", sign, digs[0], nd > 1 ? "." : "", digs + 1, exp10 < 0 ? '-' : '+',
             abs(exp10));
  } else if (exp10 < 0) {
    snprintf(buf, size, "%s0.%.*s%s", sign, -exp10 - 1, "0000", digs);
  } else if (nd > exp10 + 1) {
    snprintf(buf, size, "%s%.*s.%s", sign, exp10 + 1, digs, digs + exp10 + 1);
  } else {
    snprintf(buf, size, "%s%s%.*s", sign, digs, exp10 + 1 - nd, "000000");
  }
}
