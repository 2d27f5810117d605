/* JSON-lines logger on json-c. */
#include "po/runtime/log.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct {
  FILE *out;
  pthread_mutex_t mu;
  atomic_int level;
  int64_t (*wall_ms)(void);
} Sink;

struct po_Logger {
  Sink *sink;
  bool root;
  char *name;
  /* Bound fields with owned strings. Kept as plain data, not json_objects: json-c's reference
   * counts are not atomic by default, so no json_object may be shared between threads. */
  po_LogField *bound;
  size_t n_bound;
};

static void free_fields(po_LogField *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free((char *)f[i].key);
    free((char *)f[i].s);
  }
  free(f);
}

/* Appends a copy of src to log's bound fields, replacing a field of the same key. */
static bool bind_field(po_Logger *log, const po_LogField *src) {
  po_LogField copy = *src;
  copy.key = strdup(src->key);
  copy.s = src->type == kPo_LogField_Str && src->s ? strdup(src->s) : NULL;
  if (!copy.key || (src->type == kPo_LogField_Str && src->s && !copy.s)) {
    free((char *)copy.key);
    free((char *)copy.s);
    return false;
  }
  for (size_t i = 0; i < log->n_bound; i++) {
    if (strcmp(log->bound[i].key, copy.key) == 0) {
      free((char *)log->bound[i].key);
      free((char *)log->bound[i].s);
      log->bound[i] = copy;
      return true;
    }
  }
  po_LogField *b = realloc(log->bound, (log->n_bound + 1) * sizeof *b);
  if (!b) {
    free((char *)copy.key);
    free((char *)copy.s);
    return false;
  }
  log->bound = b;
  log->bound[log->n_bound++] = copy;
  return true;
}

static int64_t realtime_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *po_Log_FormatTime(int64_t unix_ms, char buf[32]) {
  time_t secs = (time_t)(unix_ms / 1000);
  int ms = (int)(unix_ms % 1000);
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  struct tm tm;
  gmtime_r(&secs, &tm);
  size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, 32 - n, ".%03dZ", ms);
  return buf;
}

po_Logger *po_Logger_New(const po_LoggerOptions *opts) {
  po_LoggerOptions o = opts ? *opts : (po_LoggerOptions){.level = kPo_LogLevel_Info};
  po_Logger *log = calloc(1, sizeof *log);
  Sink *sink = calloc(1, sizeof *sink);
  if (log) log->name = strdup(o.name ? o.name : "");
  if (!log || !sink || !log->name) {
    if (log) free(log->name);
    free(log);
    free(sink);
    return NULL;
  }
  sink->out = o.out ? o.out : stderr;
  pthread_mutex_init(&sink->mu, NULL);
  atomic_init(&sink->level, (int)o.level);
  sink->wall_ms = o.wall_ms ? o.wall_ms : realtime_ms;
  log->sink = sink;
  log->root = true;
  return log;
}

static po_Logger *child(po_Logger *parent, const char *name) {
  po_Logger *log = calloc(1, sizeof *log);
  if (!log) return NULL;
  log->sink = parent->sink;
  log->name = strdup(name);
  bool ok = log->name != NULL;
  for (size_t i = 0; ok && i < parent->n_bound; i++) ok = bind_field(log, &parent->bound[i]);
  if (!ok) {
    po_Logger_Free(log);
    return NULL;
  }
  return log;
}

po_Logger *po_Logger_Named(po_Logger *parent, const char *name) {
  if (!parent) return NULL;
  char *full = NULL;
  size_t np = strlen(parent->name), nn = strlen(name ? name : "");
  full = malloc(np + nn + 2);
  if (!full) return NULL;
  if (np && nn)
    snprintf(full, np + nn + 2, "%s.%s", parent->name, name);
  else
    snprintf(full, np + nn + 2, "%s%s", parent->name, nn ? name : "");
  po_Logger *log = child(parent, full);
  free(full);
  return log;
}

static json_object *field_value(const po_LogField *f) {
  switch (f->type) {
    case kPo_LogField_Str: return f->s ? json_object_new_string(f->s) : NULL;
    case kPo_LogField_Int: return json_object_new_int64(f->i);
    case kPo_LogField_Double: return json_object_new_double(f->d);
    case kPo_LogField_Bool: return json_object_new_boolean(f->i != 0);
  }
  return NULL;
}

po_Logger *po_Logger_With_(po_Logger *parent, ...) {
  if (!parent) return NULL;
  po_Logger *log = child(parent, parent->name);
  if (!log) return NULL;
  bool ok = true;
  va_list ap;
  va_start(ap, parent);
  for (const po_LogField *f; ok && (f = va_arg(ap, const po_LogField *));) ok = bind_field(log, f);
  va_end(ap);
  if (!ok) {
    po_Logger_Free(log);
    return NULL;
  }
  return log;
}

void po_Logger_Free(po_Logger *log) {
  if (!log) return;
  if (log->root) {
    pthread_mutex_destroy(&log->sink->mu);
    free(log->sink);
  }
  free_fields(log->bound, log->n_bound);
  free(log->name);
  free(log);
}

void po_Logger_SetLevel(po_Logger *log, po_LogLevel level) {
  if (log) atomic_store(&log->sink->level, (int)level);
}

po_LogLevel po_Logger_Level(po_Logger *log) {
  return log ? (po_LogLevel)atomic_load(&log->sink->level) : kPo_LogLevel_Error;
}

bool po_Logger_Enabled(po_Logger *log, po_LogLevel level) {
  return log && (int)level >= atomic_load(&log->sink->level);
}

static const char *const kLevelNames[] = {"debug", "info", "warn", "error"};

const char *po_LogLevel_Name(po_LogLevel level) {
  return (unsigned)level < 4 ? kLevelNames[level] : "unknown";
}

bool po_LogLevel_Parse(const char *s, po_LogLevel *out) {
  if (!s) return false;
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(s, kLevelNames[i]) == 0) {
      *out = (po_LogLevel)i;
      return true;
    }
  }
  if (strcasecmp(s, "warning") == 0) {
    *out = kPo_LogLevel_Warn;
    return true;
  }
  return false;
}

static json_object *begin_line(po_Logger *log, po_LogLevel level, const char *msg) {
  json_object *line = json_object_new_object();
  if (!line) return NULL;
  char ts[32];
  po_Log_FormatTime(log->sink->wall_ms(), ts);
  json_object_object_add(line, "ts", json_object_new_string(ts));
  json_object_object_add(line, "level", json_object_new_string(po_LogLevel_Name(level)));
  if (log->name[0]) json_object_object_add(line, "logger", json_object_new_string(log->name));
  json_object_object_add(line, "msg", json_object_new_string(msg ? msg : ""));
  for (size_t i = 0; i < log->n_bound; i++)
    json_object_object_add(line, log->bound[i].key, field_value(&log->bound[i]));
  return line;
}

static void end_line(po_Logger *log, json_object *line) {
  const char *text =
      json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  if (text) {
    pthread_mutex_lock(&log->sink->mu);
    fputs(text, log->sink->out);
    fputc('\n', log->sink->out);
    fflush(log->sink->out);
    pthread_mutex_unlock(&log->sink->mu);
  }
  json_object_put(line);
}

void po_Log_Write_(po_Logger *log, po_LogLevel level, const char *msg, ...) {
  if (!po_Logger_Enabled(log, level)) return;
  json_object *line = begin_line(log, level, msg);
  if (!line) return;
  va_list ap;
  va_start(ap, msg);
  for (const po_LogField *f; (f = va_arg(ap, const po_LogField *));)
    json_object_object_add(line, f->key, field_value(f));
  va_end(ap);
  end_line(log, line);
}

void po_Log_WriteFields(po_Logger *log, po_LogLevel level, const char *msg,
                        const po_LogField *fields, size_t n_fields) {
  if (!po_Logger_Enabled(log, level)) return;
  json_object *line = begin_line(log, level, msg);
  if (!line) return;
  for (size_t i = 0; i < n_fields; i++)
    json_object_object_add(line, fields[i].key, field_value(&fields[i]));
  end_line(log, line);
}
