/* Label selectors (=, ==, !=, in, notin, exists, !exists) and field selectors (=, ==, != on a
 * dotted path such as metadata.name) for list and watch, and LabelSelector objects
 * (matchLabels / matchExpressions) for webhook namespace and object selectors. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

enum { kOpEq, kOpNe, kOpIn, kOpNotIn, kOpExists, kOpNotExists };

typedef struct Req {
  bool field;
  int op;
  char *key;
  char *values[16];
  int nvalues;
} Req;

struct po_As_Selector {
  Req reqs[32];
  int n;
};

static char *trim_dup(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return strndup(s, n);
}

/* Splits on commas that are not inside parentheses. */
static bool parse_list(po_As_Selector *sel, const char *text, bool field, char *msg, size_t msgsz) {
  const char *p = text;
  while (*p) {
    const char *start = p;
    int depth = 0;
    while (*p && !(*p == ',' && depth == 0)) {
      if (*p == '(') depth++;
      if (*p == ')') depth--;
      p++;
    }
    char *part = trim_dup(start, (size_t)(p - start));
    if (*p == ',') p++;
    if (!part[0]) {
      free(part);
      continue;
    }
    if (sel->n >= 32) {
      free(part);
      snprintf(msg, msgsz, "too many selector requirements");
      return false;
    }
    Req *r = &sel->reqs[sel->n++];
    memset(r, 0, sizeof *r);
    r->field = field;
    char *op;
    if ((op = strstr(part, "!="))) {
      r->op = kOpNe;
      r->key = trim_dup(part, (size_t)(op - part));
      r->values[r->nvalues++] = trim_dup(op + 2, strlen(op + 2));
    } else if ((op = strstr(part, "=="))) {
      r->op = kOpEq;
      r->key = trim_dup(part, (size_t)(op - part));
      r->values[r->nvalues++] = trim_dup(op + 2, strlen(op + 2));
    } else if ((op = strchr(part, '='))) {
      r->op = kOpEq;
      r->key = trim_dup(part, (size_t)(op - part));
      r->values[r->nvalues++] = trim_dup(op + 1, strlen(op + 1));
    } else if (!field && (strstr(part, " in ") || strstr(part, " notin "))) {
      bool notin = strstr(part, " notin ") != NULL;
      op = strstr(part, notin ? " notin " : " in ");
      r->op = notin ? kOpNotIn : kOpIn;
      r->key = trim_dup(part, (size_t)(op - part));
      char *open = strchr(op, '('), *close = open ? strchr(open, ')') : NULL;
      if (!open || !close) {
        snprintf(msg, msgsz, "unable to parse requirement: found '%s', expected: '('", op + (notin ? 7 : 4));
        free(part);
        return false;
      }
      const char *v = open + 1;
      while (v < close && r->nvalues < 16) {
        const char *e = v;
        while (e < close && *e != ',') e++;
        r->values[r->nvalues++] = trim_dup(v, (size_t)(e - v));
        v = e + 1;
      }
    } else if (!field && part[0] == '!') {
      r->op = kOpNotExists;
      r->key = trim_dup(part + 1, strlen(part + 1));
    } else if (!field) {
      r->op = kOpExists;
      r->key = strdup(part);
    } else {
      snprintf(msg, msgsz, "invalid selector: '%s'; can't understand '%s'", text, part);
      free(part);
      return false;
    }
    free(part);
  }
  return true;
}

po_As_Selector *po_As_Selector_Parse(const char *labels, const char *fields, char *msg, size_t msgsz) {
  po_As_Selector *s = calloc(1, sizeof *s);
  if ((labels && !parse_list(s, labels, false, msg, msgsz)) || (fields && !parse_list(s, fields, true, msg, msgsz))) {
    po_As_Selector_Free(s);
    return NULL;
  }
  return s;
}

static const char *field_value(json_object *obj, const char *path, char *buf, size_t bufsz) {
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s", path);
  json_object *cur = obj;
  for (char *save = NULL, *tok = strtok_r(tmp, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
    cur = po_As_Get(cur, tok);
  if (!cur) return "";
  if (json_object_is_type(cur, json_type_string)) return json_object_get_string(cur);
  snprintf(buf, bufsz, "%s", json_object_to_json_string_ext(cur, JSON_C_TO_STRING_PLAIN));
  return buf;
}

bool po_As_Selector_Match(const po_As_Selector *s, json_object *obj) {
  if (!s) return true;
  json_object *labels = po_As_Get(po_As_Get(obj, "metadata"), "labels");
  for (int i = 0; i < s->n; i++) {
    const Req *r = &s->reqs[i];
    char buf[256];
    const char *v;
    bool has;
    if (r->field) {
      v = field_value(obj, r->key, buf, sizeof buf);
      has = true;
    } else {
      json_object *lv = po_As_Get(labels, r->key);
      has = lv != NULL;
      v = has ? json_object_get_string(lv) : NULL;
    }
    bool in = false;
    for (int j = 0; j < r->nvalues && has; j++)
      if (strcmp(r->values[j], v) == 0) in = true;
    switch (r->op) {
      case kOpEq:
      case kOpIn:
        if (!in) return false;
        break;
      case kOpNe:
      case kOpNotIn:
        if (in) return false;
        break;
      case kOpExists:
        if (!has) return false;
        break;
      case kOpNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

void po_As_Selector_Free(po_As_Selector *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) {
    free(s->reqs[i].key);
    for (int j = 0; j < s->reqs[i].nvalues; j++) free(s->reqs[i].values[j]);
  }
  free(s);
}

bool po_As_LabelSelectorObj_Match(json_object *sel, json_object *labels) {
  if (!sel) return true;
  json_object *ml = po_As_Get(sel, "matchLabels");
  if (ml) {
    json_object_object_foreach(ml, k, v) {
      const char *have = po_As_GetStr(labels, k);
      if (!have || strcmp(have, json_object_get_string(v)) != 0) return false;
    }
  }
  json_object *me = po_As_Get(sel, "matchExpressions");
  for (size_t i = 0; me && i < json_object_array_length(me); i++) {
    json_object *e = json_object_array_get_idx(me, i);
    const char *key = po_As_GetStr(e, "key"), *op = po_As_GetStr(e, "operator");
    if (!key || !op) return false;
    const char *have = po_As_GetStr(labels, key);
    json_object *vals = po_As_Get(e, "values");
    bool in = false;
    for (size_t j = 0; have && vals && j < json_object_array_length(vals); j++)
      if (strcmp(json_object_get_string(json_object_array_get_idx(vals, j)), have) == 0) in = true;
    if (strcmp(op, "In") == 0 && !in) return false;
    if (strcmp(op, "NotIn") == 0 && in) return false;
    if (strcmp(op, "Exists") == 0 && !have) return false;
    if (strcmp(op, "DoesNotExist") == 0 && have) return false;
  }
  return true;
}
