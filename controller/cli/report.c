/* Findings out: text for people, JSON for tools, GitHub workflow commands for pull requests
 * (https://docs.github.com/actions/reference/workflow-commands-for-github-actions: data escapes
 * %, CR and LF; property values also ':' and ','). */
#include <json-c/json.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"

void po_CliReport_Init(po_CliReport *r, po_Arena *a) {
  memset(r, 0, sizeof *r);
  r->arena = a;
}

po_CliFinding *po_CliReport_Add(po_CliReport *r, const po_CliObject *o) {
  if (r->count == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 32;
    po_CliFinding *bigger = po_Arena_Malloc(r->arena, cap * sizeof *bigger);
    if (!bigger) return NULL;
    if (r->count) memcpy(bigger, r->items, r->count * sizeof *bigger);
    r->items = bigger;
    r->cap = cap;
  }
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

int po_CliReport_ExitCode(const po_CliReport *r) {
  if (r->unreadable) return kPo_ExitUsage;
  return r->invalid ? kPo_ExitInvalid : kPo_ExitOk;
}

/* The message as printed: folded to its first line unless verbose (continuation lines then
 * indented under it), the hint after the first line. */
static const char *message(const po_CliFinding *f, bool verbose, const char *indent, po_Arena *a) {
  const char *m = f->message ? f->message : "";
  const char *nl = strchr(m, '\n');
  size_t first = nl ? (size_t)(nl - m) : strlen(m);
  const char *out = po_Arena_Printf(a, "%.*s%s%s%s", (int)first, m, f->hint ? " (" : "", f->hint ? f->hint : "",
                                    f->hint ? ")" : "");
  if (!verbose || !nl) return out;
  for (const char *p = nl + 1; *p;) {
    const char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l) out = po_Arena_Printf(a, "%s\n%s%.*s", out, indent, (int)l, p);
    p = e ? e + 1 : p + l;
  }
  return out;
}

static const char *object_name(const po_CliFinding *f, po_Arena *a) {
  return po_Arena_Printf(a, "%s %s%s%s", f->kind, f->ns, *f->ns ? "/" : "", *f->name ? f->name : "(unnamed)");
}

/* "patches[0] /path" (under "spec.envoyExtensions[1] " for Consul objects), or "". */
static const char *patch_place(const po_CliFinding *f, po_Arena *a) {
  const char *ext = f->extension >= 0 ? po_Arena_Printf(a, "spec.envoyExtensions[%d]", f->extension) : "";
  const char *p = f->patch >= 0 ? po_Arena_Printf(a, "%sPatches[%d]%s%s", *ext ? " " : "", f->patch,
                                                  f->path ? " " : "", f->path ? f->path : "")
                                : "";
  return po_Arena_Printf(a, "%s%s", ext, p);
}

static void print_text(const po_CliFinding *f, bool verbose, FILE *out, po_Arena *a) {
  fputs(f->file ? f->file : "-", out);
  if (f->pos.line) fprintf(out, ":%d", f->pos.line);
  if (f->pos.line && f->pos.column) fprintf(out, ":%d", f->pos.column);
  fprintf(out, ": %s: ", f->warning ? "warning" : "error");
  if (f->kind) {
    fprintf(out, "document %d", f->doc);
    if (f->item >= 0) fprintf(out, " items[%d]", f->item);
    const char *place = patch_place(f, a);
    fprintf(out, ": %s%s%s: ", object_name(f, a), *place ? ": " : "", place);
  }
  fprintf(out, "%s\n", message(f, verbose, "    ", a));
}

static void escape(FILE *out, const char *s, bool property) {
  for (; *s; s++) {
    if (*s == '%') fputs("%25", out);
    else if (*s == '\r') fputs("%0D", out);
    else if (*s == '\n') fputs("%0A", out);
    else if (property && *s == ':') fputs("%3A", out);
    else if (property && *s == ',') fputs("%2C", out);
    else fputc(*s, out);
  }
}

static void print_github(const po_CliFinding *f, bool verbose, FILE *out, po_Arena *a) {
  fprintf(out, "::%s file=", f->warning ? "warning" : "error");
  escape(out, f->file ? f->file : "-", true);
  if (f->pos.line) fprintf(out, ",line=%d", f->pos.line);
  if (f->pos.line && f->pos.column) fprintf(out, ",col=%d", f->pos.column);
  fputs(",title=", out);
  if (f->kind) {
    const char *place = patch_place(f, a);
    escape(out, po_Arena_Printf(a, "%s%s%s", object_name(f, a), *place ? " " : "", place), true);
  } else {
    escape(out, "unreadable input", true);
  }
  fputs("::", out);
  escape(out, message(f, verbose, "", a), false);
  fputc('\n', out);
}

static json_object *str_or_null(const char *s) { return s ? json_object_new_string(s) : NULL; }
static json_object *int_or_null(int i, int none) { return i == none ? NULL : json_object_new_int(i); }

static void print_json(const po_CliReport *r, FILE *out) {
  json_object *root = json_object_new_object(), *sum = json_object_new_object(), *list = json_object_new_array();
  json_object_object_add(sum, "valid", json_object_new_int64((int64_t)r->valid));
  json_object_object_add(sum, "invalid", json_object_new_int64((int64_t)r->invalid));
  json_object_object_add(sum, "skipped", json_object_new_int64((int64_t)r->skipped));
  json_object_object_add(sum, "unreadable", json_object_new_int64((int64_t)r->unreadable));
  json_object_object_add(root, "summary", sum);
  for (size_t i = 0; i < r->count; i++) {
    const po_CliFinding *f = &r->items[i];
    json_object *j = json_object_new_object();
    json_object_object_add(j, "severity", json_object_new_string(f->warning ? "warning" : "error"));
    json_object_object_add(j, "code", json_object_new_string(f->code ? f->code : ""));
    json_object_object_add(j, "file", str_or_null(f->file));
    json_object_object_add(j, "document", int_or_null(f->doc, 0));
    json_object_object_add(j, "item", int_or_null(f->item, -1));
    json_object_object_add(j, "line", int_or_null(f->pos.line, 0));
    json_object_object_add(j, "column", int_or_null(f->pos.column, 0));
    json_object_object_add(j, "kind", str_or_null(f->kind));
    json_object_object_add(j, "namespace", f->kind ? json_object_new_string(f->ns) : NULL);
    json_object_object_add(j, "name", f->kind ? json_object_new_string(f->name) : NULL);
    json_object_object_add(j, "extension", int_or_null(f->extension, -1));
    json_object_object_add(j, "patch", int_or_null(f->patch, -1));
    json_object_object_add(j, "path", str_or_null(f->path));
    json_object_object_add(j, "message", json_object_new_string(f->message ? f->message : ""));
    json_object_object_add(j, "hint", str_or_null(f->hint));
    json_object_array_add(list, j);
  }
  json_object_object_add(root, "findings", list);
  fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(root);
}

/* Stable: by file, then as found (input errors are found while reading, the rest after). */
static void sort_by_file(po_CliFinding *items, size_t n) {
  for (size_t i = 1; i < n; i++) {
    po_CliFinding x = items[i];
    size_t j = i;
    for (; j > 0 && items[j - 1].file_seq > x.file_seq; j--) items[j] = items[j - 1];
    items[j] = x;
  }
}

void po_CliReport_Print(po_CliReport *r, po_OutputFormat format, bool verbose, FILE *out) {
  sort_by_file(r->items, r->count);
  if (format == kPo_OutputJson) {
    print_json(r, out);
    return;
  }
  for (size_t i = 0; i < r->count; i++) {
    if (format == kPo_OutputGithub) print_github(&r->items[i], verbose, out, r->arena);
    else print_text(&r->items[i], verbose, out, r->arena);
  }
  fprintf(out, "%zu valid, %zu invalid, %zu skipped", r->valid, r->invalid, r->skipped);
  if (r->unreadable) fprintf(out, ", %zu unreadable", r->unreadable);
  fputc('\n', out);
}
