/* YAML -> po_Value through libyaml's event parser. Plain scalars are resolved with the YAML 1.2
 * core schema (what Kubernetes' YAML reader does for JSON-compatible documents); quoted
 * scalars are strings; explicit !!str/!!int/!!float/!!bool/!!null tags are honoured. Aliases
 * share the anchored value, and their count is bounded so a "billion laughs" file cannot
 * explode later consumers. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "internal.h"

/* Aliases share the anchored value, so the tree stays small, but consumers that walk it (JSON
 * output, validation) see every expansion: the expanded size is bounded too. */
enum { kMaxDepth = 64, kMaxAliases = 1000, kMaxAnchors = 4096, kMaxExpanded = 1000000 };

typedef struct {
  yaml_parser_t parser;
  po_Arena *arena;
  po_Status *st;
  struct {
    const char *name;
    po_Value *value;
    long weight;
    int height; /* levels below the anchored node, so an alias cannot build past kMaxDepth */
  } anchors[kMaxAnchors];
  int anchor_count;
  int alias_count;
} Reader;

static po_Pos mark_pos(yaml_mark_t m) { return (po_Pos){(int)m.line + 1, (int)m.column + 1}; }

static bool fail(Reader *r, yaml_mark_t m, po_StatusCode code, const char *what) {
  return po_Status_Set(r->st, code, "line %d, column %d: %s", (int)m.line + 1, (int)m.column + 1, what);
}

static bool next(Reader *r, yaml_event_t *ev) {
  if (yaml_parser_parse(&r->parser, ev)) return true;
  yaml_mark_t m = r->parser.problem_mark;
  po_Status_Set(r->st, kPo_ErrParse, "line %d, column %d: invalid YAML: %s%s%s", (int)m.line + 1,
                (int)m.column + 1, r->parser.problem ? r->parser.problem : "parse error",
                r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
  return false;
}

static bool matches_int(const char *s, int64_t *out, bool *overflow) {
  const char *p = s;
  int base = 10;
  if (strncmp(p, "0o", 2) == 0) { base = 8; p += 2; }
  else if (strncmp(p, "0x", 2) == 0) { base = 16; p += 2; }
  else if (*p == '-' || *p == '+') p++;
  if (!*p) return false;
  for (const char *q = p; *q; q++) {
    bool ok = base == 16 ? strchr("0123456789abcdefABCDEF", *q) != NULL
                         : (*q >= '0' && *q < (base == 8 ? '8' : ':'));
    if (!ok) return false;
  }
  errno = 0;
  long long v = strtoll(base == 10 ? s : p, NULL, base);
  *overflow = errno == ERANGE;
  *out = v;
  return true;
}

static bool matches_float(const char *s, double *out) {
  static const char *inf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
  static const char *ninf[] = {"-.inf", "-.Inf", "-.INF"};
  for (size_t i = 0; i < sizeof inf / sizeof *inf; i++) if (!strcmp(s, inf[i])) return *out = INFINITY, true;
  for (size_t i = 0; i < sizeof ninf / sizeof *ninf; i++) if (!strcmp(s, ninf[i])) return *out = -INFINITY, true;
  if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) return *out = NAN, true;
  /* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
  const char *p = s;
  if (*p == '-' || *p == '+') p++;
  int digits = 0;
  while (*p >= '0' && *p <= '9') p++, digits++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
  }
  if (!digits) return false;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '-' || *p == '+') p++;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p) return false;
  *out = strtod(s, NULL);
  return true;
}

static po_Value *scalar(Reader *r, yaml_event_t *ev) {
  const char *s = (const char *)ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  const char *tag = (const char *)ev->data.scalar.tag;
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  po_Arena *a = r->arena;
  if (tag && strcmp(tag, YAML_STR_TAG) == 0) return po_Value_NewString(a, s, len);
  if (!plain && !tag) return po_Value_NewString(a, s, len);
  if (strlen(s) != len) return po_Value_NewString(a, s, len); /* embedded NUL */
  bool want_null = tag && !strcmp(tag, YAML_NULL_TAG), want_bool = tag && !strcmp(tag, YAML_BOOL_TAG);
  bool want_int = tag && !strcmp(tag, YAML_INT_TAG), want_float = tag && !strcmp(tag, YAML_FLOAT_TAG);
  if (!tag || want_null) {
    if (len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
      return po_Value_NewNull(a);
  }
  if (!tag || want_bool) {
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return po_Value_NewBool(a, true);
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return po_Value_NewBool(a, false);
  }
  int64_t i;
  bool overflow = false;
  if ((!tag || want_int) && matches_int(s, &i, &overflow)) {
    /* Beyond int64 a literal is no Go int; it is a float64, as encoding/json would make it. */
    if (!overflow) return po_Value_NewInt(a, i);
    po_Value *v = po_Value_NewFloat(a, strtod(s, NULL));
    if (v && !(v->lit = po_Arena_Strndup(a, s, len))) v = NULL;
    return v;
  }
  double d;
  if ((!tag || want_float || want_int) && matches_float(s, &d)) return po_Value_NewFloat(a, d);
  if (tag && strncmp(tag, "tag:yaml.org,2002:", 18) == 0) {
    fail(r, ev->start_mark, kPo_ErrParse, "scalar does not match its explicit tag");
    return NULL;
  }
  return po_Value_NewString(a, s, len);
}

/* What a node amounts to once its aliases are expanded: nodes in all, and levels below it. */
typedef struct {
  long weight;
  int height;
} Size;

static bool remember(Reader *r, const yaml_char_t *anchor, po_Value *v, Size sz, yaml_mark_t m) {
  if (!anchor) return true;
  if (r->anchor_count >= kMaxAnchors) return fail(r, m, kPo_ErrLimit, "too many YAML anchors");
  r->anchors[r->anchor_count].name = po_Arena_Strndup(r->arena, (const char *)anchor, strlen((const char *)anchor));
  r->anchors[r->anchor_count].weight = sz.weight;
  r->anchors[r->anchor_count].height = sz.height;
  r->anchors[r->anchor_count++].value = v;
  return true;
}

static po_Value *node(Reader *r, yaml_event_t *ev, int depth, Size *sz);

static po_Value *collection(Reader *r, yaml_event_t *start, int depth, Size *sz) {
  bool is_map = start->type == YAML_MAPPING_START_EVENT;
  po_Value *v = is_map ? po_Value_NewMap(r->arena) : po_Value_NewList(r->arena);
  if (!v) return NULL;
  v->pos = mark_pos(start->start_mark);
  const yaml_char_t *anchor = is_map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor;
  *sz = (Size){1, 0};
  for (;;) {
    yaml_event_t ev;
    if (!next(r, &ev)) return NULL;
    if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      return remember(r, anchor, v, *sz, start->start_mark) ? v : NULL;
    }
    Size w = {0, 0};
    if (is_map) {
      if (ev.type != YAML_SCALAR_EVENT) {
        fail(r, ev.start_mark, kPo_ErrParse, "mapping keys must be scalars");
        yaml_event_delete(&ev);
        return NULL;
      }
      char *key = po_Arena_Strndup(r->arena, (const char *)ev.data.scalar.value, ev.data.scalar.length);
      yaml_event_delete(&ev);
      yaml_event_t vev;
      if (!key || !next(r, &vev)) return NULL;
      po_Value *child = node(r, &vev, depth + 1, &w);
      yaml_event_delete(&vev);
      if (!child || !po_Value_MapPut(r->arena, v, key, child)) return NULL;
    } else {
      po_Value *child = node(r, &ev, depth + 1, &w);
      yaml_event_delete(&ev);
      if (!child || !po_Value_ListAppend(r->arena, v, child)) return NULL;
    }
    sz->weight += w.weight;
    if (w.height + 1 > sz->height) sz->height = w.height + 1;
    if (sz->weight > kMaxExpanded) {
      fail(r, start->start_mark, kPo_ErrLimit, "YAML expands (through aliases) to more than 1000000 nodes");
      return NULL;
    }
  }
}

static po_Value *node(Reader *r, yaml_event_t *ev, int depth, Size *sz) {
  *sz = (Size){1, 0};
  if (depth > kMaxDepth) {
    fail(r, ev->start_mark, kPo_ErrLimit, "YAML nested deeper than 64 levels");
    return NULL;
  }
  switch (ev->type) {
    case YAML_SCALAR_EVENT: {
      po_Value *v = scalar(r, ev);
      if (!v) {
        if (po_Status_IsOk(r->st)) po_Status_Set(r->st, kPo_ErrNoMemory, "out of memory");
        return NULL;
      }
      v->pos = mark_pos(ev->start_mark);
      return remember(r, ev->data.scalar.anchor, v, *sz, ev->start_mark) ? v : NULL;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return collection(r, ev, depth, sz);
    case YAML_ALIAS_EVENT: {
      if (++r->alias_count > kMaxAliases) {
        fail(r, ev->start_mark, kPo_ErrLimit, "too many YAML aliases");
        return NULL;
      }
      for (int i = r->anchor_count; i-- > 0;) {
        if (!strcmp(r->anchors[i].name, (const char *)ev->data.alias.anchor)) {
          *sz = (Size){r->anchors[i].weight, r->anchors[i].height};
          if (depth + sz->height > kMaxDepth) {
            fail(r, ev->start_mark, kPo_ErrLimit, "YAML nested (through aliases) deeper than 64 levels");
            return NULL;
          }
          return r->anchors[i].value;
        }
      }
      fail(r, ev->start_mark, kPo_ErrParse, "alias names an unknown anchor");
      return NULL;
    }
    default:
      fail(r, ev->start_mark, kPo_ErrParse, "unexpected YAML event");
      return NULL;
  }
}

bool po_Value_ParseYaml(const char *text, size_t len, po_Arena *a, po_Value ***docs_out,
                        size_t *count_out, po_Status *st) {
  Reader *r = calloc(1, sizeof *r);
  if (!r) return po_Status_Set(st, kPo_ErrNoMemory, "out of memory");
  r->arena = a;
  r->st = st;
  yaml_parser_initialize(&r->parser);
  yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
  po_Value **docs = NULL;
  size_t count = 0, cap = 0;
  bool ok = false;
  for (;;) {
    yaml_event_t ev;
    if (!next(r, &ev)) break;
    yaml_event_type_t type = ev.type;
    if (type == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      ok = true;
      break;
    }
    if (type == YAML_STREAM_START_EVENT || type == YAML_DOCUMENT_END_EVENT) {
      yaml_event_delete(&ev);
      continue;
    }
    if (type == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&ev);
      yaml_event_t root;
      if (!next(r, &root)) break;
      Size w;
      po_Value *v = node(r, &root, 0, &w);
      yaml_event_delete(&root);
      if (!v) break;
      if (count == cap) {
        cap = cap ? cap * 2 : 8;
        po_Value **grown = po_Arena_Malloc(a, cap * sizeof *grown);
        if (!grown) { po_Status_Set(st, kPo_ErrNoMemory, "out of memory"); break; }
        if (count) memcpy(grown, docs, count * sizeof *docs);
        docs = grown;
      }
      docs[count++] = v;
      r->anchor_count = 0; /* anchors do not cross documents */
      continue;
    }
    fail(r, ev.start_mark, kPo_ErrParse, "unexpected YAML event");
    yaml_event_delete(&ev);
    break;
  }
  yaml_parser_delete(&r->parser);
  free(r);
  if (ok) {
    *docs_out = docs;
    *count_out = count;
  }
  return ok;
}
