/* Findings out: text for people, JSON for tools, GitHub workflow commands for pull requests
 * (https://docs.github.com/actions/reference/workflow-commands-for-github-actions: data escapes
 * %, CR and LF; property values also ':' and ','). Text and github escape what manifests
 * control (see "escaping" below). */
#include <json-c/json.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"

void po_CliReport_Init(po_CliReport *r, po_Arena *a) {
  memset(r, 0, sizeof *r);
  r->arena = a;
}

po_CliFinding *po_CliReport_Add(po_CliReport *r, const po_CliObject *o) {
  po_CliFinding *items = po_Arena_Grow(r->arena, r->items, r->count, &r->cap, sizeof *items, 32);
  if (!items) return NULL;
  r->items = items;
  po_CliFinding *f = &r->items[r->count++];
  memset(f, 0, sizeof *f);
  f->item = f->extension = f->patch = -1;
  f->ns = f->name = "";
  if (o) {
    f->file = o->file;
    f->file_seq = o->file_seq;
    f->doc = o->doc;
    f->item = o->item;
    f->pos = o->pos;
  }
  return f;
}

static bool own(po_Arena *a, const char **s) {
  if (!*s) return true;
  *s = po_Arena_Strndup(a, *s, strlen(*s));
  return *s != NULL;
}

bool po_CliReport_Own(po_CliReport *r, size_t from) {
  for (size_t i = from; i < r->count; i++) {
    po_CliFinding *f = &r->items[i];
    if (!own(r->arena, &f->message) || !own(r->arena, &f->path) || !own(r->arena, &f->hint) ||
        !own(r->arena, &f->kind) || !own(r->arena, &f->ns) || !own(r->arena, &f->name)) {
      return false;
    }
  }
  return true;
}

bool po_CliReport_NotRead(po_CliReport *r, const char *path, const char *why) {
  po_CliNotRead *nr = po_Arena_Grow(r->arena, r->not_read, r->not_read_count, &r->not_read_cap, sizeof *nr, 16);
  if (!nr) return false;
  r->not_read = nr;
  r->not_read[r->not_read_count++] = (po_CliNotRead){path, why};
  return true;
}

static bool nothing_read(const po_CliReport *r) { return r->inputs_done && r->files_read == 0 && !r->allow_empty; }

/* Files were read, but none held an object validate checks (empty files, ConfigMaps only). */
static bool nothing_checked(const po_CliReport *r) {
  return r->need_checked && !r->allow_empty && r->inputs_done && r->files_read > 0 && !r->unreadable &&
         r->valid + r->invalid + r->invalid_before == 0;
}

int po_CliReport_ExitCode(const po_CliReport *r) {
  if (r->unreadable || nothing_read(r) || nothing_checked(r)) return kPo_Exit_Usage;
  return r->invalid || r->invalid_before ? kPo_Exit_Invalid : kPo_Exit_Ok;
}

/* ---- escaping ------------------------------------------------------------------------------
 * Text and github outputs end up on terminals and in CI logs, where a raw ESC moves the cursor
 * or recolours and a raw line break followed by `::warning` is a workflow command of its own.
 * Everything a manifest controls (file names, kinds, names, paths, and the parts of messages
 * that quote them) is printed visibly: C0 controls and DEL as \n, \r, \t or \xNN, the C1
 * range as \u00NN, bytes that are not UTF-8 as \xNN. JSON output needs none of this (json-c
 * escapes control characters). */

typedef enum { kEscText = 0, kEscGithubData, kEscGithubProperty } Esc;

/* Length of the valid UTF-8 sequence of two or more bytes at p (n bytes left), else 0. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
  unsigned char c = p[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (n < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; i++) if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return len;
}

static void put_char(FILE *out, char c, Esc esc) {
  if (esc != kEscText && c == '%') fputs("%25", out);
  else if (esc == kEscGithubProperty && c == ':') fputs("%3A", out);
  else if (esc == kEscGithubProperty && c == ',') fputs("%2C", out);
  else fputc(c, out);
}

/* "##[" anywhere in a line is a GitHub workflow command of the old form (the runner's
 * ActionCommand.TryParse looks for it at any place): its second '#' is printed as \x23, which
 * no runner reads as '#', and a reader still does. */
static bool command_hash(const unsigned char *p, size_t i, size_t n) {
  return p[i] == '#' && i > 0 && p[i - 1] == '#' && i + 1 < n && p[i + 1] == '[';
}

/* n bytes of s on one line, escaped as above and then for GitHub when `esc` says so. */
static void put_n(FILE *out, const char *s, size_t n, Esc esc) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (command_hash(p, i, n)) {
      fputs("\\x23", out);
      i++;
      continue;
    }
    if (c >= 0x20 && c < 0x7F) {
      put_char(out, (char)c, esc);
      i++;
      continue;
    }
    size_t len = c >= 0x80 ? utf8_seq(p + i, n - i) : 0;
    if (len == 2 && c == 0xC2 && p[i + 1] <= 0x9F) fprintf(out, "\\u%04x", p[i + 1]); /* C1: U+0080..U+009F */
    else if (len) fwrite(p + i, 1, len, out);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c == '\t') fputs("\\t", out);
    else fprintf(out, "\\x%02x", c);
    i += len ? len : 1;
  }
}

static void put(FILE *out, const char *s, Esc esc) { put_n(out, s, strlen(s), esc); }

/* ---- text and github -------------------------------------------------------------------------- */

/* Where the engine's field list begins in a message (the line break before its last
 * "available <message> fields:" line), or NULL. The list (schema names, one a line) is the only
 * part of a message whose line breaks are the engine's own; any other line break came from a
 * manifest's string quoted in the message, and is printed escaped with the rest of that line.
 * The last such line is the engine's: a quoted string always comes before the list. */
static const char *field_list(const char *m) {
  static const char kHead[] = "\navailable ", kTail[] = " fields:";
  const char *found = NULL;
  for (const char *p = strstr(m, kHead); p; p = strstr(p + 1, kHead)) {
    const char *line = p + 1, *eol = strchr(line, '\n');
    size_t l = eol ? (size_t)(eol - line) : strlen(line), tl = sizeof kTail - 1;
    if (l > tl && !memcmp(line + l - tl, kTail, tl)) found = p;
  }
  return found;
}

/* The message on one line, the hint in parentheses, then (verbose) the field list, each line
 * after `sep` (written as is: a line break and an indent, or GitHub's %0A). */
static void put_message(FILE *out, const po_CliFinding *f, bool verbose, const char *sep, Esc esc) {
  const char *m = f->message ? f->message : "";
  const char *list = field_list(m);
  put_n(out, m, list ? (size_t)(list - m) : strlen(m), esc);
  if (f->hint) {
    fputs(" (", out);
    put(out, f->hint, esc);
    fputc(')', out);
  }
  if (!verbose || !list) return;
  for (const char *p = list + 1; *p;) {
    const char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l) {
      fputs(sep, out);
      put_n(out, p, l, esc);
    }
    p = e ? e + 1 : p + l;
  }
}

static void put_object(FILE *out, const po_CliFinding *f, Esc esc) {
  put(out, f->kind, esc);
  fputc(' ', out);
  put(out, f->ns, esc);
  if (*f->ns) fputc('/', out);
  put(out, *f->name ? f->name : "(unnamed)", esc);
}

/* "Patches[0] /path" (under "spec.envoyExtensions[1] " for Consul objects); false when neither. */
static bool has_place(const po_CliFinding *f) { return f->extension >= 0 || f->patch >= 0; }

static void put_place(FILE *out, const po_CliFinding *f, Esc esc) {
  if (f->extension >= 0) fprintf(out, "spec.envoyExtensions[%d]", f->extension);
  if (f->patch < 0) return;
  fprintf(out, "%sPatches[%d]", f->extension >= 0 ? " " : "", f->patch);
  if (f->path) {
    fputc(' ', out);
    put(out, f->path, esc);
  }
}

/* Length of the white space .NET's Char.IsWhiteSpace sees at p (what the runner's TrimStart()
 * removes before it looks for "::"), 0 when none: ASCII blanks and controls 9-13, U+0085, U+00A0,
 * U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. */
static size_t unicode_space(const unsigned char *p) {
  if (*p == ' ' || (*p >= 9 && *p <= 13)) return 1;
  if (p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) return 2;
  if (p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) return 3;
  if (p[0] == 0xE2 && p[1] == 0x80 && p[2] && ((p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF)) return 3;
  if (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) return 3;
  if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) return 3;
  return 0;
}

/* A line that begins with a path: a CI log reads a line starting, after white space (Unicode's
 * too: U+00A0, U+2003...), with "::" as a workflow command. A path that starts with ':' or any
 * white space is printed after "./" (the same file, relative), so no line begins with it. */
static void put_file(FILE *out, const char *file) {
  if (file[0] == ':' || unicode_space((const unsigned char *)file)) fputs("./", out);
  put(out, file, kEscText);
}

/* s as text output prints it (control characters, C1, bytes that are not UTF-8 and "##["
 * neutralised as put_n does): s itself when nothing needs it, else a copy in `a`. For text the
 * report does not print itself (preview's names). NULL when out of memory. */
const char *po_Cli_Shown(const char *s, po_Arena *a) {
  if (!s) return "";
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  bool plain = true;
  for (size_t i = 0; i < n && plain; i++) plain = p[i] >= 0x20 && p[i] < 0x7F && !command_hash(p, i, n);
  if (plain) return s;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return NULL;
  put_n(m, s, n, kEscText);
  if (fclose(m) != 0 || !buf) return free(buf), NULL;
  char *o = po_Arena_Strndup(a, buf, len);
  free(buf);
  return o;
}

/* s for the JSON report: bytes that are not UTF-8 spelled out as \xNN (a backslash, 'x', two
 * hex digits), so the report is UTF-8 (RFC 8259 8.1); everything else as it is (json-c escapes
 * control characters). A file name is bytes: one that is not UTF-8 is still named. */
static const char *utf8_only(const char *s, po_Arena *a) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s), bad = 0;
  for (size_t i = 0; i < n;) {
    size_t l = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i);
    if (!l) bad++, l = 1;
    i += l;
  }
  if (!bad) return s;
  char *o = po_Arena_Malloc(a, n + bad * 3 + 1), *w = o;
  if (!o) return NULL; /* out of memory: the caller says so */
  for (size_t i = 0; i < n;) {
    size_t l = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i);
    if (!l) {
      w += sprintf(w, "\\x%02x", p[i]);
      i++;
      continue;
    }
    memcpy(w, p + i, l);
    w += l;
    i += l;
  }
  *w = '\0';
  return o;
}

static void print_text(const po_CliFinding *f, bool verbose, FILE *out) {
  put_file(out, f->file ? f->file : "-");
  if (f->pos.line) fprintf(out, ":%d", f->pos.line);
  if (f->pos.line && f->pos.column) fprintf(out, ":%d", f->pos.column);
  fprintf(out, ": %s: ", f->warning ? "warning" : "error");
  if (f->kind) {
    fprintf(out, "document %d", f->doc);
    if (f->item >= 0) fprintf(out, " items[%d]", f->item);
    fputs(": ", out);
    put_object(out, f, kEscText);
    if (has_place(f)) {
      fputs(": ", out);
      put_place(out, f, kEscText);
    }
    fputs(": ", out);
  }
  put_message(out, f, verbose, "\n    ", kEscText);
  fputc('\n', out);
}

static void print_github(const po_CliFinding *f, bool verbose, FILE *out) {
  fprintf(out, "::%s file=", f->warning ? "warning" : "error");
  put(out, f->file ? f->file : "-", kEscGithubProperty);
  if (f->pos.line) fprintf(out, ",line=%d", f->pos.line);
  if (f->pos.line && f->pos.column) fprintf(out, ",col=%d", f->pos.column);
  fputs(",title=", out);
  if (f->kind) {
    put_object(out, f, kEscGithubProperty);
    if (has_place(f)) {
      fputc(' ', out);
      put_place(out, f, kEscGithubProperty);
    }
  } else {
    put(out, "unreadable input", kEscGithubProperty);
  }
  fputs("::", out);
  put_message(out, f, verbose, "%0A", kEscGithubData);
  fputc('\n', out);
}


/* "go-control-plane envoy v1.32.4 (consul@1.22); go-control-plane envoy v1.37.0 (istio@1.31,
 * envoy-gateway@1.9)": each snapshot that judged objects, with the mesh releases it judged them
 * for, in the mesh table's order; written straight to `out` (nothing allocated: a report of an
 * out-of-memory run must not lose it). False when no object was judged. */
static bool print_judged(const po_CliReport *r, const char *prefix, FILE *out) {
  bool done[kPo_MeshSlots] = {false}, any = false;
  for (size_t m = 0; m < kPo_MeshSlots; m++) {
    if (!r->judged[m] || done[m]) continue;
    fputs(any ? "; " : prefix, out);
    fprintf(out, "%s (", po_EnvoyApi_Name(r->judged_api[m]));
    for (size_t k = m, first = 1; k < kPo_MeshSlots; k++) {
      if (!r->judged[k] || r->judged_api[k] != r->judged_api[m]) continue;
      const po_MeshRelease *rel = r->judged_release[k];
      fprintf(out, "%s%s@%s%s%s", first ? "" : ", ", po_Mesh_Name((po_Mesh)k), rel ? rel->release : "?",
              r->judged_assumed[k] ? " assumed" : "",
              rel && r->judged_api[k] != po_MeshRelease_Api(rel) ? " via --envoy-api" : "");
      done[k] = true;
      first = 0;
    }
    fputc(')', out);
    any = true;
  }
  if (any) fputc('\n', out);
  return any;
}

/* The JSON report, built with json-c, whose constructors return NULL when memory runs out and
 * whose adders take a NULL value for a JSON null (and assert on a NULL container): every value
 * that is not meant as null is checked, so an allocation that failed is "out of memory", never a
 * report with a count turned null, a finding left out, or json-c's assertion (adv-27,
 * cli_adv27_oom). `ok` goes false at the first failure and stays false. */
typedef struct {
  po_Arena *a;
  bool ok;
} Json;

static json_object *need(Json *j, json_object *v) {
  if (!v) j->ok = false;
  return v;
}
static json_object *jstr(Json *j, const char *s) {
  const char *u = utf8_only(s, j->a);
  return need(j, u ? json_object_new_string(u) : NULL);
}
static json_object *str_or_null(Json *j, const char *s) { return s ? jstr(j, s) : NULL; }
static json_object *int_or_null(Json *j, int i, int none) { return i == none ? NULL : need(j, json_object_new_int(i)); }
static json_object *count(Json *j, size_t n) { return need(j, json_object_new_int64((int64_t)n)); }

/* Adds v (NULL: a JSON null) under key, or v as the array's next element (key NULL). */
static void add(Json *j, json_object *to, const char *key, json_object *v) {
  if (!j->ok || !to || (key ? json_object_object_add(to, key, v) : json_object_array_add(to, v)) != 0) {
    json_object_put(v);
    j->ok = false;
  }
}

static void add_finding(Json *j, json_object *list, const po_CliFinding *f) {
  json_object *o = need(j, json_object_new_object());
  add(j, o, "severity", need(j, json_object_new_string(f->warning ? "warning" : "error")));
  add(j, o, "code", need(j, json_object_new_string(f->code ? f->code : "")));
  add(j, o, "file", str_or_null(j, f->file));
  add(j, o, "document", int_or_null(j, f->doc, 0));
  add(j, o, "item", int_or_null(j, f->item, -1));
  add(j, o, "line", int_or_null(j, f->pos.line, 0));
  add(j, o, "column", int_or_null(j, f->pos.column, 0));
  add(j, o, "kind", str_or_null(j, f->kind));
  add(j, o, "namespace", f->kind ? jstr(j, f->ns) : NULL);
  add(j, o, "name", f->kind ? jstr(j, f->name) : NULL);
  add(j, o, "extension", int_or_null(j, f->extension, -1));
  add(j, o, "patch", int_or_null(j, f->patch, -1));
  add(j, o, "path", str_or_null(j, f->path));
  add(j, o, "message", jstr(j, f->message ? f->message : ""));
  add(j, o, "hint", str_or_null(j, f->hint));
  add(j, list, NULL, o);
}

static json_object *judged_json(Json *j, const po_CliReport *r) {
  json_object *list = need(j, json_object_new_array());
  for (size_t m = 0; j->ok && m < kPo_MeshSlots; m++) {
    if (!r->judged[m]) continue;
    json_object *o = need(j, json_object_new_object());
    const po_MeshRelease *rel = r->judged_release[m];
    add(j, o, "mesh", need(j, json_object_new_string(po_Mesh_Name((po_Mesh)m))));
    add(j, o, "release", rel ? need(j, json_object_new_string(rel->release)) : NULL);
    add(j, o, "envoy_api", need(j, json_object_new_string(po_EnvoyApi_Version(r->judged_api[m]))));
    add(j, o, "envoy_api_name", need(j, json_object_new_string(po_EnvoyApi_Name(r->judged_api[m]))));
    add(j, o, "envoy_api_named", need(j, json_object_new_boolean(rel && r->judged_api[m] != po_MeshRelease_Api(rel))));
    add(j, o, "release_assumed", need(j, json_object_new_boolean(r->judged_assumed[m])));
    add(j, o, "objects", count(j, r->judged[m]));
    add(j, list, NULL, o);
  }
  return list;
}

/* False: out of memory, nothing printed. */
static bool print_json(const po_CliReport *r, FILE *out) {
  Json j = {r->arena, true};
  json_object *root = need(&j, json_object_new_object()), *sum = need(&j, json_object_new_object());
  add(&j, sum, "valid", count(&j, r->valid));
  add(&j, sum, "invalid", count(&j, r->invalid));
  if (r->invalid_before_word) add(&j, sum, "invalid_before", count(&j, r->invalid_before));
  add(&j, sum, "skipped", count(&j, r->skipped));
  add(&j, sum, "unreadable", count(&j, r->unreadable));
  add(&j, sum, "not_read", count(&j, r->not_read_count));
  add(&j, sum, "files_read", count(&j, r->files_read));
  add(&j, root, "summary", sum);
  /* which Envoy API snapshot judged the objects of each mesh: per mesh release */
  if (r->name_apis) add(&j, root, "envoy_api", judged_json(&j, r));
  json_object *nr = need(&j, json_object_new_array());
  for (size_t i = 0; j.ok && i < r->not_read_count; i++) {
    json_object *e = need(&j, json_object_new_object());
    add(&j, e, "path", jstr(&j, r->not_read[i].path));
    add(&j, e, "reason", jstr(&j, r->not_read[i].why));
    add(&j, nr, NULL, e);
  }
  add(&j, root, "not_read", nr);
  json_object *list = need(&j, json_object_new_array());
  for (size_t i = 0; j.ok && i < r->count; i++) add_finding(&j, list, &r->items[i]);
  add(&j, root, "findings", list);
  const char *text = j.ok ? json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
  if (text) fprintf(out, "%s\n", text);
  json_object_put(root);
  return text != NULL;
}

static void sort_by_file(po_CliFinding *items, size_t n) {
  for (size_t i = 1; i < n; i++) {
    po_CliFinding x = items[i];
    size_t j = i;
    for (; j > 0 && items[j - 1].file_seq > x.file_seq; j--) items[j] = items[j - 1];
    items[j] = x;
  }
}

bool po_CliReport_Print(po_CliReport *r, po_OutputFormat format, bool verbose, FILE *out) {
  sort_by_file(r->items, r->count);
  if (format == kPo_OutputFormat_Json) return print_json(r, out);
  for (size_t i = 0; i < r->count; i++) {
    if (format == kPo_OutputFormat_Github) print_github(&r->items[i], verbose, out);
    else print_text(&r->items[i], verbose, out);
  }
  for (size_t i = 0; i < r->not_read_count; i++) {
    const po_CliNotRead *e = &r->not_read[i];
    if (format == kPo_OutputFormat_Github) {
      fputs("::notice file=", out);
      put(out, e->path, kEscGithubProperty);
      fputs(",title=not read::", out);
      put(out, e->why, kEscGithubData);
    } else {
      put_file(out, e->path);
      fputs(": not read: ", out);
      put(out, e->why, kEscText);
    }
    fputc('\n', out);
  }
  if (r->name_apis) print_judged(r, format == kPo_OutputFormat_Github ? "::notice title=Envoy API::" : "Envoy API: ", out);
  fprintf(out, "%zu %s, %zu %s, ", r->valid, r->valid_word ? r->valid_word : "valid", r->invalid,
          r->invalid_word ? r->invalid_word : "invalid");
  if (r->invalid_before_word) fprintf(out, "%zu %s, ", r->invalid_before, r->invalid_before_word);
  fprintf(out, "%zu skipped", r->skipped);
  if (r->unreadable) fprintf(out, ", %zu unreadable", r->unreadable);
  if (r->not_read_count) fprintf(out, "; %zu %s not read", r->not_read_count, r->not_read_count == 1 ? "entry" : "entries");
  fputc('\n', out);
  if (nothing_read(r)) {
    fprintf(out, "%snothing validated: no file was read (%s)\n", format == kPo_OutputFormat_Github ? "::error title=nothing validated::" : "",
            r->unreadable       ? "the errors above say why"
            : r->not_read_count ? "every entry of the inputs is listed above as not read"
                                : "the directories given are empty");
  }
  if (nothing_checked(r) && r->empty_why) {
    fprintf(out, "%snothing checked: %s (--allow-empty accepts that)\n",
            format == kPo_OutputFormat_Github ? "::error title=nothing checked::" : "", r->empty_why);
  } else if (nothing_checked(r)) {
    fprintf(out, "%snothing validated: %zu %s read, but no PropertyOverride, ServiceDefaults, ProxyDefaults, "
                 "EnvoyFilter or EnvoyPatchPolicy in %s (--allow-empty accepts that)\n",
            format == kPo_OutputFormat_Github ? "::error title=nothing validated::" : "", r->files_read,
            r->files_read == 1 ? "file was" : "files were", r->files_read == 1 ? "it" : "them");
  }
  return true;
}
