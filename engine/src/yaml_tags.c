/* The YAML tags go-yaml v2 (through sigs.k8s.io/yaml, i.e. kubectl) turns into plain strings
 * rather than resolving: what kubectl sends for them, checked against kubectl 1.32 in
 * tests/vectors/yaml (tag*.yaml).
 *   !!binary     base64 (Go's StdEncoding: padded, '\r' and '\n' ignored) decoded to its bytes;
 *                JSON then carries each byte that is not valid UTF-8 as U+FFFD, as Go's
 *                encoding/json writes it. Bad base64 is an error.
 *   !!timestamp  the text as written (go-yaml keeps a timestamp bound for interface{} a string),
 *                but only if Go's time.Parse takes it in one of go-yaml's four layouts; else an
 *                error ("cannot decode ... as a !!timestamp").
 *   any other tag:yaml.org,2002: tag that is not a core one (!!merge, !!value, !!set, ...): the
 *                text as written. */
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "compiled.h"

static const char kPrefix[] = "tag:yaml.org,2002:";

static int b64(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Go's base64.StdEncoding.DecodeString: quanta of four, '=' padding only to end the last one,
 * newlines anywhere ignored. False on bad data. */
static bool base64_decode(const char *s, size_t len, unsigned char *out, size_t *out_len) {
  int q[4], n = 0;
  size_t o = 0;
  bool ended = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\r' || c == '\n') continue;
    if (ended) return false;
    if (c == '=') {
      if (n < 2) return false;
      /* "xx==" or "xxx=": the rest of the quantum is padding */
      int need = 4 - n;
      for (int k = 0; k < need; k++) {
        while (i < len && (s[i] == '\r' || s[i] == '\n')) i++;
        if (i >= len || s[i] != '=') return false;
        i++;
      }
      i--;
      out[o++] = (unsigned char)(q[0] << 2 | q[1] >> 4);
      if (n == 3) out[o++] = (unsigned char)((q[1] & 15) << 4 | q[2] >> 2);
      n = 0;
      ended = true;
      continue;
    }
    int v = b64(c);
    if (v < 0) return false;
    q[n++] = v;
    if (n == 4) {
      out[o++] = (unsigned char)(q[0] << 2 | q[1] >> 4);
      out[o++] = (unsigned char)((q[1] & 15) << 4 | q[2] >> 2);
      out[o++] = (unsigned char)((q[2] & 3) << 6 | q[3]);
      n = 0;
    }
  }
  if (n != 0) return false;
  *out_len = o;
  return true;
}

/* Length of the valid UTF-8 sequence at p (Go's utf8.DecodeRune rules: no overlongs, no
 * surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!k || k > n) return 0;
  unsigned lo = 0x80, hi = 0xBF;
  if (c == 0xE0) lo = 0xA0;
  else if (c == 0xED) hi = 0x9F;
  else if (c == 0xF0) lo = 0x90;
  else if (c == 0xF4) hi = 0x8F;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < k; i++) if ((p[i] & 0xC0) != 0x80) return 0;
  return k;
}

/* Each byte that does not start a valid UTF-8 sequence becomes U+FFFD, as encoding/json does. */
static char *json_utf8(const unsigned char *s, size_t len, po_Arena *a, size_t *out_len) {
  char *out = po_Arena_Malloc(a, len * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t k = utf8_len(s + i, len - i);
    if (k) {
      memcpy(out + o, s + i, k);
      o += k;
      i += k;
    } else {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    }
  }
  out[o] = '\0';
  *out_len = o;
  return out;
}

/* Go's time.Parse number fields: 1 or 2 digits ("1", "2", "15", "4", "5" layouts) or exactly
 * 2 (zone offsets). Advances *p. */
static bool num(const char **p, const char *end, bool fixed2, int *out) {
  const char *s = *p;
  if (s >= end || *s < '0' || *s > '9') return false;
  int v = *s++ - '0';
  if (s < end && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  else if (fixed2) return false;
  *out = v;
  *p = s;
  return true;
}

static int days_in(int month, int year) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : d[month - 1];
}

/* go-yaml v2's parseTimestamp: time.Parse with "2006-1-2T15:4:5.999999999Z07:00", the same with
 * a lower-case 't', "2006-1-2 15:4:5.999999999" and "2006-1-2", on the whole text. */
static bool go_timestamp(const char *s, size_t len) {
  const char *p = s, *end = s + len;
  for (int i = 0; i < 4; i++) if (p + i >= end || p[i] < '0' || p[i] > '9') return false;
  int year = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
  p += 4;
  int month, day;
  if (p >= end || *p++ != '-' || !num(&p, end, false, &month) || p >= end || *p++ != '-' ||
      !num(&p, end, false, &day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in(month, year)) return false;
  if (p == end) return true; /* "2006-1-2" */
  char sep = *p++;
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  int h, m, sec;
  if (!num(&p, end, false, &h) || p >= end || *p++ != ':' || !num(&p, end, false, &m) || p >= end || *p++ != ':' ||
      !num(&p, end, false, &sec)) {
    return false;
  }
  if (h > 23 || m > 59 || sec > 59) return false;
  if (end - p >= 2 && (*p == '.' || *p == ',') && p[1] >= '0' && p[1] <= '9') {
    p++;
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (sep == ' ') return p == end; /* that layout has no zone */
  if (p < end && *p == 'Z') return p + 1 == end;
  if (end - p != 6 || (*p != '+' && *p != '-') || p[3] != ':') return false;
  const char *z = p + 1;
  int zh, zm;
  if (!num(&z, p + 3, true, &zh)) return false;
  z = p + 4;
  if (!num(&z, end, true, &zm)) return false;
  return zh <= 24 && zm <= 60;
}

bool po_YamlTag_String(const char *tag, const char *s, size_t len, po_Arena *a, const char **out, size_t *out_len,
                       const char **error) {
  *error = NULL;
  if (!tag || strncmp(tag, kPrefix, sizeof kPrefix - 1) != 0) return false;
  const char *t = tag + sizeof kPrefix - 1;
  if (!strcmp(t, "null") || !strcmp(t, "bool") || !strcmp(t, "int") || !strcmp(t, "float") || !strcmp(t, "str")) {
    return false;
  }
  if (!strcmp(t, "binary")) {
    unsigned char *bytes = po_Arena_Malloc(a, len / 4 * 3 + 4);
    size_t n = 0;
    if (!bytes) return *error = "out of memory", true;
    if (!base64_decode(s, len, bytes, &n)) {
      *error = "!!binary value contains invalid base64 data (kubectl refuses it too)";
      return true;
    }
    *out = json_utf8(bytes, n, a, out_len);
    if (!*out) *error = "out of memory";
    return true;
  }
  if (!strcmp(t, "timestamp") && !go_timestamp(s, len)) {
    *error = "not a !!timestamp kubectl accepts (YYYY-M-D, optionally then T, t or a space, H:M:S, an "
             "optional .fraction, and with T or t a zone Z or +hh:mm)";
    return true;
  }
  *out = s;
  *out_len = len;
  return true;
}
