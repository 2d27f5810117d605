/* A small CEL subset for CRD x-kubernetes-validations rules, evaluated while parsing (with a
 * no-evaluation mode for short-circuits and macros): literals, self and field access, indexing,
 * ! - * / % + < <= > >= == != in && || ?:, has(), size(), startsWith, endsWith, contains,
 * matches (POSIX ERE, close to RE2 for the usual anchored patterns), and the all / exists /
 * exists_one / filter macros. A rule outside the subset is skipped (counted as passing) and logged once:
 * the webhook and the controller validate too. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

typedef struct Var {
  const char *name;
  json_object *value;
} Var;

typedef struct P {
  const char *s, *p;
  Var vars[8];
  int nvars;
  char err[256];     /* evaluation error (rule fails) */
  bool unsupported;  /* parse error or construct outside the subset (rule skipped) */
} P;

/* A value: json (NULL is CEL null) plus an error flag carried through short-circuits. */
typedef struct V {
  json_object *j;
  bool err;
} V;

static V ok(json_object *j) { return (V){j, false}; }
static V fail_v(P *p, const char *fmt, const char *a) {
  if (!p->err[0]) snprintf(p->err, sizeof p->err, fmt, a ? a : "");
  return (V){NULL, true};
}
static void drop(V v) { json_object_put(v.j); }

static void ws(P *p) {
  while (isspace((unsigned char)*p->p)) p->p++;
}

static bool eat(P *p, const char *tok) {
  ws(p);
  size_t n = strlen(tok);
  if (strncmp(p->p, tok, n) != 0) return false;
  if (isalpha((unsigned char)tok[0]) && (isalnum((unsigned char)p->p[n]) || p->p[n] == '_')) return false;
  p->p += n;
  return true;
}

static bool ident(P *p, char *out, size_t outsz) {
  ws(p);
  if (!isalpha((unsigned char)*p->p) && *p->p != '_') return false;
  size_t n = 0;
  while (isalnum((unsigned char)p->p[n]) || p->p[n] == '_') n++;
  snprintf(out, outsz, "%.*s", (int)n, p->p);
  p->p += n;
  return true;
}

static V expr(P *p, bool ev);

static bool truthy(V v, bool *out) {
  if (v.err || !v.j || !json_object_is_type(v.j, json_type_boolean)) return false;
  *out = json_object_get_boolean(v.j);
  return true;
}

static bool is_num(json_object *j) { return j && (json_object_is_type(j, json_type_int) || json_object_is_type(j, json_type_double)); }

static int compare(json_object *a, json_object *b, bool *okp) {
  *okp = true;
  if (is_num(a) && is_num(b)) {
    double x = json_object_get_double(a), y = json_object_get_double(b);
    return x < y ? -1 : x > y;
  }
  if (a && b && json_object_is_type(a, json_type_string) && json_object_is_type(b, json_type_string))
    return strcmp(json_object_get_string(a), json_object_get_string(b));
  *okp = false;
  return 0;
}

/* CEL equality on JSON values: numbers by value (1 == 1.0), lists element by element, maps by
 * their key sets and values; values of different types are unequal (heterogeneous equality). */
static bool cel_equal(json_object *a, json_object *b) {
  if (!a || !b) return !a && !b;
  if (is_num(a) && is_num(b)) {
    if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
      return json_object_get_int64(a) == json_object_get_int64(b);
    return json_object_get_double(a) == json_object_get_double(b);
  }
  json_type t = json_object_get_type(a);
  if (t != json_object_get_type(b)) return false;
  switch (t) {
    case json_type_boolean: return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string:
      return json_object_get_string_len(a) == json_object_get_string_len(b) &&
             !memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)json_object_get_string_len(a));
    case json_type_array: {
      size_t n = json_object_array_length(a);
      if (n != json_object_array_length(b)) return false;
      for (size_t i = 0; i < n; i++)
        if (!cel_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i))) return false;
      return true;
    }
    case json_type_object: {
      if (json_object_object_length(a) != json_object_object_length(b)) return false;
      json_object_object_foreach(a, k, va) {
        json_object *vb = NULL;
        if (!json_object_object_get_ex(b, k, &vb) || !cel_equal(va, vb)) return false;
      }
      return true;
    }
    default: return false;
  }
}

static V args_and_call(P *p, bool ev, V recv, const char *fn);

/* Primary expressions and member chains. */
static V member(P *p, bool ev) {
  V v = ok(NULL);
  char id[128];
  ws(p);
  if (eat(p, "(")) {
    v = expr(p, ev);
    if (!eat(p, ")")) p->unsupported = true;
  } else if (*p->p == '\'' || *p->p == '"') {
    char q = *p->p++;
    const char *st = p->p;
    while (*p->p && *p->p != q) p->p += (*p->p == '\\' && p->p[1]) ? 2 : 1;
    if (ev) v = ok(json_object_new_string_len(st, (int)(p->p - st)));
    if (*p->p) p->p++;
  } else if (isdigit((unsigned char)*p->p)) {
    char *end;
    double d = strtod(p->p, &end);
    bool isint = true;
    for (const char *c = p->p; c < end; c++)
      if (*c == '.' || *c == 'e' || *c == 'E') isint = false;
    if (isint) {
      errno = 0;
      long long i = strtoll(p->p, &end, 10);
      if (errno) v = fail_v(p, "integer literal out of range", NULL);
      else if (ev) v = ok(json_object_new_int64(i));
    } else if (ev) {
      v = ok(json_object_new_double(d));
    }
    p->p = end;
    if (*p->p == 'u') p->p++;
  } else if (eat(p, "[")) {
    json_object *arr = ev ? json_object_new_array() : NULL;
    ws(p);
    while (*p->p && *p->p != ']') {
      V e = expr(p, ev);
      if (ev && !e.err) json_object_array_add(arr, e.j);
      else {
        if (e.err) v.err = true;
        drop(e);
      }
      if (!eat(p, ",")) break;
    }
    if (!eat(p, "]")) p->unsupported = true;
    if (v.err) json_object_put(arr); /* an error value never carries json */
    else v.j = arr;
  } else if (ident(p, id, sizeof id)) {
    if (!strcmp(id, "true") || !strcmp(id, "false")) {
      if (ev) v = ok(json_object_new_boolean(id[0] == 't'));
    } else if (!strcmp(id, "null")) {
      v = ok(NULL);
    } else if (!strcmp(id, "has")) {
      /* has(x.a.b): x.a is selected as usual (an absent a is an error), then b is tested on it.
       * As in CEL, the test needs a map operand: has() on null, a list or a scalar is an error. */
      if (!eat(p, "(")) { p->unsupported = true; return v; }
      char base[128];
      if (!ident(p, base, sizeof base)) { p->unsupported = true; return v; }
      V cur = ok(NULL);
      bool found = false;
      for (int i = p->nvars - 1; i >= 0; i--)
        if (!strcmp(p->vars[i].name, base)) {
          if (ev) cur = ok(json_object_get(p->vars[i].value));
          found = true;
          break;
        }
      if (!found) p->unsupported = true;
      char pending[128] = "";
      while (eat(p, ".")) {
        char f[128];
        if (!ident(p, f, sizeof f)) { p->unsupported = true; break; }
        if (pending[0] && ev && !cur.err) { /* select the previous field */
          json_object *r = NULL;
          if (cur.j && json_object_is_type(cur.j, json_type_object) && json_object_object_get_ex(cur.j, pending, &r)) {
            json_object_get(r);
            drop(cur);
            cur = ok(r);
          } else {
            drop(cur);
            cur = fail_v(p, "no such key: %s", pending);
          }
        }
        snprintf(pending, sizeof pending, "%s", f);
      }
      if (!pending[0]) p->unsupported = true; /* has() takes a field selection */
      if (!eat(p, ")")) p->unsupported = true;
      if (!ev || cur.err) return cur;
      if (cur.j && json_object_is_type(cur.j, json_type_object)) v = ok(json_object_new_boolean(json_object_object_get_ex(cur.j, pending, NULL)));
      else v = fail_v(p, "invalid type for field selection: %s", pending);
      drop(cur);
      return v;
    } else if (eat(p, "(")) { /* global function: size(x) */
      V a = expr(p, ev);
      if (!eat(p, ")")) p->unsupported = true;
      if (!strcmp(id, "size")) {
        v = args_and_call(p, ev, a, "size#global");
      } else if (!strcmp(id, "int") || !strcmp(id, "string") || !strcmp(id, "double")) {
        v = args_and_call(p, ev, a, id);
      } else {
        p->unsupported = true;
        drop(a);
      }
    } else {
      bool found = false;
      for (int i = p->nvars - 1; i >= 0; i--)
        if (!strcmp(p->vars[i].name, id)) {
          if (ev) v = ok(json_object_get(p->vars[i].value));
          found = true;
          break;
        }
      if (!found) p->unsupported = true; /* oldSelf, type names, ...: outside the subset */
    }
  } else {
    p->unsupported = true;
    return v;
  }
  for (;;) {
    if (eat(p, "[")) {
      V k = expr(p, ev);
      if (!eat(p, "]")) p->unsupported = true;
      if (ev && !v.err && !k.err) {
        json_object *r = NULL;
        bool got = false;
        if (v.j && json_object_is_type(v.j, json_type_array) && is_num(k.j)) {
          long i = (long)json_object_get_int64(k.j);
          if (i >= 0 && (size_t)i < json_object_array_length(v.j)) r = json_object_array_get_idx(v.j, (size_t)i), got = true;
        } else if (v.j && json_object_is_type(v.j, json_type_object) && k.j && json_object_is_type(k.j, json_type_string)) {
          got = json_object_object_get_ex(v.j, json_object_get_string(k.j), &r);
        }
        V nv = got ? ok(json_object_get(r)) : fail_v(p, "no such key or index", NULL);
        drop(v);
        v = nv;
      } else if (k.err) {
        drop(v);
        v = (V){NULL, true};
      }
      drop(k);
      continue;
    }
    if (!eat(p, ".")) break;
    char f[128];
    if (!ident(p, f, sizeof f)) { p->unsupported = true; break; }
    ws(p);
    if (*p->p == '(') {
      p->p++;
      v = args_and_call(p, ev, v, f);
      continue;
    }
    if (ev && !v.err) {
      json_object *r = NULL;
      if (v.j && json_object_is_type(v.j, json_type_object) && json_object_object_get_ex(v.j, f, &r)) {
        json_object_get(r);
        drop(v);
        v = ok(r);
      } else {
        drop(v);
        v = fail_v(p, "no such key: %s", f);
      }
    }
  }
  return v;
}

/* glibc's regcomp can take exponential memory on stacked quantifiers, which RE2 (the real
 * server's engine) rejects anyway ("bad repetition operator"); such patterns, very long ones and
 * large counted repetitions are left unenforced. */
static bool regex_tame(const char *re) {
  if (strlen(re) > 256) return false;
  for (const char *c = re; *c; c++) {
    if (*c == '\\' && c[1]) {
      c++;
      continue;
    }
    if ((*c == '+' || *c == '*' || *c == '?' || *c == '}') && (c[1] == '+' || c[1] == '*' || c[1] == '{')) return false;
    if (*c == '{' && strtol(c + 1, NULL, 10) > 100) return false;
  }
  return true;
}

/* Called after "recv.fn(" (or for globals after the argument); consumes arguments and ")". */
static V args_and_call(P *p, bool ev, V recv, const char *fn) {
  if (!strcmp(fn, "all") || !strcmp(fn, "exists") || !strcmp(fn, "exists_one") || !strcmp(fn, "filter")) {
    char var[64];
    if (!ident(p, var, sizeof var) || !eat(p, ",") || p->nvars >= 8) {
      p->unsupported = true;
      drop(recv);
      return ok(NULL);
    }
    const char *body = p->p;
    size_t n = 0;
    json_object *list = recv.j;
    bool object = list && json_object_is_type(list, json_type_object);
    json_object *keys = NULL;
    if (object) {
      keys = json_object_new_array();
      json_object_object_foreach(list, k, val) {
        (void)val;
        json_object_array_add(keys, json_object_new_string(k));
      }
      list = keys;
    }
    bool iterable = list && json_object_is_type(list, json_type_array);
    if (ev && !recv.err && iterable) n = json_object_array_length(list);
    size_t count = 0, nfalse = 0;
    bool any_err = recv.err;
    /* filter(): the elements (a map's keys) whose predicate is true, in order */
    json_object *kept = !strcmp(fn, "filter") ? json_object_new_array() : NULL;
    const char *end = NULL;
    p->vars[p->nvars].name = var;
    p->nvars++;
    for (size_t i = 0; i < n; i++) {
      p->p = body;
      p->vars[p->nvars - 1].value = json_object_array_get_idx(list, i);
      V r = expr(p, true);
      bool b;
      if (truthy(r, &b)) {
        count += b;
        nfalse += !b;
        if (b && kept) json_object_array_add(kept, json_object_get(json_object_array_get_idx(list, i)));
      } else {
        any_err = true;
      }
      drop(r);
      end = p->p;
    }
    if (!end) { /* nothing to iterate: parse the body once without evaluating */
      p->p = body;
      p->vars[p->nvars - 1].value = NULL;
      drop(expr(p, false));
    } else {
      p->p = end;
    }
    p->nvars--;
    json_object_put(keys);
    drop(recv);
    if (!eat(p, ")")) p->unsupported = true;
    if (!ev || (kept && (any_err || !iterable))) json_object_put(kept), kept = NULL;
    if (!ev) return ok(NULL);
    if (!recv.err && !iterable) return fail_v(p, "no matching overload for %s() (not a list or map)", fn);
    /* filter() accumulates through a conditional: any element's error is its result */
    if (!strcmp(fn, "filter")) return any_err ? fail_v(p, "error evaluating %s()", fn) : ok(kept);
    /* CEL folds all() with && and exists() with ||, both commutative over errors: one false
     * element decides all(), one true element decides exists(), whatever errors the others
     * raised. exists_one() counts, so any error is its result. */
    if (!strcmp(fn, "all") && !recv.err && nfalse) return ok(json_object_new_boolean(0));
    if (!strcmp(fn, "exists") && !recv.err && count) return ok(json_object_new_boolean(1));
    if (any_err) return fail_v(p, "error evaluating %s()", fn);
    if (!strcmp(fn, "all")) return ok(json_object_new_boolean(1));
    if (!strcmp(fn, "exists")) return ok(json_object_new_boolean(0));
    return ok(json_object_new_boolean(count == 1));
  }
  V arg = ok(NULL);
  bool has_arg = false;
  if (strcmp(fn, "size#global") != 0 && strcmp(fn, "int") != 0 && strcmp(fn, "string") != 0 && strcmp(fn, "double") != 0) {
    ws(p);
    if (*p->p != ')') {
      arg = expr(p, ev);
      has_arg = true;
    }
    if (!eat(p, ")")) p->unsupported = true;
  }
  if (!ev) {
    drop(recv);
    drop(arg);
    return ok(NULL);
  }
  if (recv.err || arg.err) {
    drop(recv);
    drop(arg);
    return (V){NULL, true};
  }
  json_object *r = recv.j;
  V out = fail_v(p, "no matching overload for %s", fn);
  bool rs = r && json_object_is_type(r, json_type_string);
  bool as = has_arg && arg.j && json_object_is_type(arg.j, json_type_string);
  if (!strcmp(fn, "size") || !strcmp(fn, "size#global")) {
    if (rs) out = ok(json_object_new_int64(json_object_get_string_len(r)));
    else if (r && json_object_is_type(r, json_type_array)) out = ok(json_object_new_int64((int64_t)json_object_array_length(r)));
    else if (r && json_object_is_type(r, json_type_object)) out = ok(json_object_new_int64(json_object_object_length(r)));
  } else if (rs && as && (!strcmp(fn, "startsWith") || !strcmp(fn, "endsWith") || !strcmp(fn, "contains"))) {
    const char *a = json_object_get_string(r), *b = json_object_get_string(arg.j);
    size_t la = strlen(a), lb = strlen(b);
    bool res = fn[0] == 's' ? strncmp(a, b, lb) == 0 : fn[0] == 'e' ? (la >= lb && !strcmp(a + la - lb, b)) : strstr(a, b) != NULL;
    out = ok(json_object_new_boolean(res));
  } else if (rs && as && !strcmp(fn, "matches")) {
    regex_t re;
    if (!regex_tame(json_object_get_string(arg.j))) {
      p->unsupported = true;
    } else if (regcomp(&re, json_object_get_string(arg.j), REG_EXTENDED | REG_NOSUB) == 0) {
      out = ok(json_object_new_boolean(regexec(&re, json_object_get_string(r), 0, NULL, 0) == 0));
      regfree(&re);
    } else {
      p->unsupported = true;
    }
  } else if (!strcmp(fn, "int") && is_num(r)) {
    out = ok(json_object_new_int64(json_object_get_int64(r)));
  } else if (!strcmp(fn, "string") && r) {
    out = ok(json_object_new_string(rs ? json_object_get_string(r) : json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN)));
  } else {
    p->unsupported = true;
  }
  drop(recv);
  drop(arg);
  return out;
}

static V negate(P *p, V v) {
  V r;
  if (json_object_is_type(v.j, json_type_int)) {
    int64_t x = json_object_get_int64(v.j);
    r = x == INT64_MIN ? fail_v(p, "integer overflow", NULL) : ok(json_object_new_int64(-x));
  } else {
    r = ok(json_object_new_double(-json_object_get_double(v.j)));
  }
  drop(v);
  return r;
}

static V unary(P *p, bool ev) {
  if (eat(p, "!")) {
    V v = unary(p, ev);
    bool b;
    if (!ev) return v;
    if (!truthy(v, &b)) { drop(v); return (V){NULL, true}; }
    drop(v);
    return ok(json_object_new_boolean(!b));
  }
  ws(p);
  if (*p->p == '-' && !isdigit((unsigned char)p->p[1])) {
    p->p++;
    V v = unary(p, ev);
    if (!ev || v.err) return v;
    if (!is_num(v.j)) { drop(v); return fail_v(p, "no matching overload for -", NULL); }
    return negate(p, v);
  }
  if (*p->p == '-') { /* negative literal */
    p->p++;
    V v = member(p, ev);
    if (!ev || v.err || !is_num(v.j)) return v;
    return negate(p, v);
  }
  return member(p, ev);
}

static V arith(P *p, bool ev, int level) { /* level 0: + -, level 1: * / % */
  V a = level ? unary(p, ev) : arith(p, ev, 1);
  for (;;) {
    ws(p);
    char op = *p->p;
    bool match = level ? (op == '*' || op == '/' || op == '%') : (op == '+' || (op == '-' && p->p[1] != '>'));
    if (!match) return a;
    p->p++;
    V b = level ? unary(p, ev) : arith(p, ev, 1);
    if (!ev) continue;
    V r = (V){NULL, true};
    if (!a.err && !b.err) {
      if (op == '+' && a.j && b.j && json_object_is_type(a.j, json_type_string) && json_object_is_type(b.j, json_type_string)) {
        char *s = po_As_Printf("%s%s", json_object_get_string(a.j), json_object_get_string(b.j));
        r = ok(json_object_new_string(s));
        free(s);
      } else if (is_num(a.j) && is_num(b.j)) {
        bool ints = json_object_is_type(a.j, json_type_int) && json_object_is_type(b.j, json_type_int);
        int64_t x = json_object_get_int64(a.j), y = json_object_get_int64(b.j);
        double dx = json_object_get_double(a.j), dy = json_object_get_double(b.j);
        int64_t z = 0;
        bool over = false;
        if (ints) {
          if (op == '+') over = __builtin_add_overflow(x, y, &z);
          else if (op == '-') over = __builtin_sub_overflow(x, y, &z);
          else if (op == '*') over = __builtin_mul_overflow(x, y, &z);
          else if (y != 0 && !(x == INT64_MIN && y == -1)) z = op == '/' ? x / y : x % y;
          else over = y != 0;
        }
        if ((op == '/' || op == '%') && ints && y == 0) r = fail_v(p, "division by zero", NULL);
        else if (ints && over) r = fail_v(p, "integer overflow", NULL);
        else if (ints) r = ok(json_object_new_int64(z));
        else if (op != '%') r = ok(json_object_new_double(op == '+' ? dx + dy : op == '-' ? dx - dy : op == '*' ? dx * dy : dx / dy));
      } else {
        r = fail_v(p, "no matching overload for arithmetic", NULL);
      }
    }
    drop(a);
    drop(b);
    a = r;
  }
}

static V rel(P *p, bool ev) {
  V a = arith(p, ev, 0);
  const char *ops[] = {"==", "!=", "<=", ">=", "<", ">", "in"};
  for (size_t i = 0; i < 7; i++) {
    if (!eat(p, ops[i])) continue;
    V b = arith(p, ev, 0);
    if (!ev) return a;
    V r = (V){NULL, true};
    if (!a.err && !b.err) {
      if (i == 0 || i == 1) {
        bool eq = cel_equal(a.j, b.j);
        r = ok(json_object_new_boolean(i == 0 ? eq : !eq));
      } else if (i == 6) {
        bool in = false;
        if (b.j && json_object_is_type(b.j, json_type_array))
          for (size_t k = 0; k < json_object_array_length(b.j); k++) in |= cel_equal(json_object_array_get_idx(b.j, k), a.j);
        else if (b.j && json_object_is_type(b.j, json_type_object) && a.j && json_object_is_type(a.j, json_type_string))
          in = json_object_object_get_ex(b.j, json_object_get_string(a.j), NULL);
        r = ok(json_object_new_boolean(in));
      } else {
        bool okc;
        int c = compare(a.j, b.j, &okc);
        if (okc) r = ok(json_object_new_boolean(i == 2 ? c <= 0 : i == 3 ? c >= 0 : i == 4 ? c < 0 : c > 0));
        else r = fail_v(p, "no matching overload for comparison", NULL);
      }
    }
    drop(a);
    drop(b);
    return r;
  }
  return a;
}

static V logic(P *p, bool ev, bool is_or) {
  V a = is_or ? logic(p, ev, false) : rel(p, ev);
  while (eat(p, is_or ? "||" : "&&")) {
    V b = is_or ? logic(p, ev, false) : rel(p, ev);
    if (!ev) continue;
    bool x, y, hx = truthy(a, &x), hy = truthy(b, &y);
    V r;
    /* CEL's commutative short-circuit: true || error is true, false && error is false */
    if (is_or) r = (hx && x) || (hy && y) ? ok(json_object_new_boolean(1)) : (hx && hy) ? ok(json_object_new_boolean(0)) : (V){NULL, true};
    else r = (hx && !x) || (hy && !y) ? ok(json_object_new_boolean(0)) : (hx && hy) ? ok(json_object_new_boolean(1)) : (V){NULL, true};
    drop(a);
    drop(b);
    a = r;
  }
  return a;
}

static V expr(P *p, bool ev) {
  V c = logic(p, ev, true);
  if (!eat(p, "?")) return c;
  bool b = false;
  bool known = ev && truthy(c, &b);
  drop(c);
  V x = expr(p, ev && known && b);
  if (!eat(p, ":")) p->unsupported = true;
  V y = expr(p, ev && known && !b);
  if (!ev) return ok(NULL);
  if (!known) {
    drop(x);
    drop(y);
    return (V){NULL, true};
  }
  if (b) {
    drop(y);
    return x;
  }
  drop(x);
  return y;
}

int po_As_Cel_EvalVars(const char *expr_text, const char *const *names, json_object *const *values, int n, char *err,
                       size_t errsz) {
  P p = {.s = expr_text, .p = expr_text};
  if (n > 4) n = 4; /* the rest of vars[] is for macro variables */
  for (int i = 0; i < n; i++) {
    p.vars[i].name = names[i];
    p.vars[i].value = values[i];
  }
  p.nvars = n;
  V v = expr(&p, true);
  ws(&p);
  if (*p.p) p.unsupported = true;
  bool b = false;
  int res;
  if (p.unsupported) res = -1;
  else if (truthy(v, &b)) res = b ? 1 : 0;
  else {
    snprintf(err, errsz, "%s", p.err[0] ? p.err : v.err ? "evaluation error" : "expression did not evaluate to a bool");
    res = 2;
  }
  drop(v);
  return res;
}

int po_As_Cel_Eval(const char *rule, json_object *self, char *err, size_t errsz) {
  const char *names[] = {"self"};
  json_object *values[] = {self};
  int res = po_As_Cel_EvalVars(rule, names, values, 1, err, errsz);
  if (res == 2 && !strcmp(err, "expression did not evaluate to a bool")) snprintf(err, errsz, "rule did not evaluate to a bool");
  return res;
}
