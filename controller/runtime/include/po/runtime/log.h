/* Structured logs: one JSON object per line (stderr by default), e.g.
 *   {"ts":"2026-12-01T19:55:14.123Z","level":"info","logger":"controller.propertyoverride",
 *    "msg":"reconciled","key":"default/web","duration_ms":3}
 * Fields: ts (RFC 3339 UTC with milliseconds), level (debug, info, warn, error), logger (dotted
 * name, omitted when empty), msg, then the logger's bound fields, then the call's fields.
 * JSON is produced by json-c. Thread-safe: a line is written with one call under the sink's lock.
 *
 *   po_Log_Info(log, "reconciled", po_Str("key", key), po_Int("duration_ms", ms));
 *   po_Logger *child = po_Logger_With(po_Logger_Named(log, "controller"), po_Str("name", n));
 */
#ifndef PO_RUNTIME_LOG_H
#define PO_RUNTIME_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
  kPo_LogLevel_Debug = 0,
  kPo_LogLevel_Info = 1,
  kPo_LogLevel_Warn = 2,
  kPo_LogLevel_Error = 3,
} po_LogLevel;

typedef enum { kPo_LogField_Str, kPo_LogField_Int, kPo_LogField_Double, kPo_LogField_Bool } po_LogFieldType;

typedef struct {
  const char *key;
  po_LogFieldType type;
  const char *s;
  int64_t i;
  double d;
} po_LogField;

/* Field constructors: compound literals, valid until the end of the enclosing block. */
#define po_Str(k, v) (&(const po_LogField){.key = (k), .type = kPo_LogField_Str, .s = (v)})
#define po_Int(k, v) (&(const po_LogField){.key = (k), .type = kPo_LogField_Int, .i = (int64_t)(v)})
#define po_Double(k, v) \
  (&(const po_LogField){.key = (k), .type = kPo_LogField_Double, .d = (double)(v)})
#define po_Bool(k, v) (&(const po_LogField){.key = (k), .type = kPo_LogField_Bool, .i = !!(v)})

typedef struct po_Logger po_Logger;

typedef struct {
  FILE *out;           /* NULL: stderr */
  po_LogLevel level;   /* lines below it are dropped */
  const char *name;    /* root logger name ("" or NULL for none) */
  /* Wall clock in milliseconds since the epoch; NULL: CLOCK_REALTIME. Tests pin it. */
  int64_t (*wall_ms)(void);
} po_LoggerOptions;

/* A root logger; its sink (FILE, level, lock) is shared by every child. NULL when out of memory. */
po_Logger *po_Logger_New(const po_LoggerOptions *opts);
/* A child named "<parent>.<name>". */
po_Logger *po_Logger_Named(po_Logger *parent, const char *name);
/* A child with fields bound to every line it writes (a NULL-terminated list of po_LogField *). */
#define po_Logger_With(parent, ...) po_Logger_With_((parent), __VA_ARGS__, (const po_LogField *)0)
po_Logger *po_Logger_With_(po_Logger *parent, ...);
/* Frees a logger made by New, Named or With. Children must be freed before their root. */
void po_Logger_Free(po_Logger *log);

/* Shared by the root and all children. */
void po_Logger_SetLevel(po_Logger *log, po_LogLevel level);
po_LogLevel po_Logger_Level(po_Logger *log);
bool po_Logger_Enabled(po_Logger *log, po_LogLevel level);

/* "debug", "info", "warn" (or "warning"), "error"; false for anything else. */
bool po_LogLevel_Parse(const char *s, po_LogLevel *out);
const char *po_LogLevel_Name(po_LogLevel level);

/* Writes one line. log may be NULL (nothing is written). Fields: a NULL-terminated list. */
#define po_Log_Debug(log, ...) po_Log_Write_((log), kPo_LogLevel_Debug, __VA_ARGS__, (const po_LogField *)0)
#define po_Log_Info(log, ...) po_Log_Write_((log), kPo_LogLevel_Info, __VA_ARGS__, (const po_LogField *)0)
#define po_Log_Warn(log, ...) po_Log_Write_((log), kPo_LogLevel_Warn, __VA_ARGS__, (const po_LogField *)0)
#define po_Log_Error(log, ...) po_Log_Write_((log), kPo_LogLevel_Error, __VA_ARGS__, (const po_LogField *)0)
void po_Log_Write_(po_Logger *log, po_LogLevel level, const char *msg, ...);
/* The same with an array of fields (for callers that build them at run time). */
void po_Log_WriteFields(po_Logger *log, po_LogLevel level, const char *msg,
                        const po_LogField *fields, size_t n_fields);

/* Formats ms since the epoch as RFC 3339 UTC with milliseconds, "2026-12-01T19:55:14.123Z".
 * buf needs 32 bytes. */
char *po_Log_FormatTime(int64_t unix_ms, char buf[32]);

#endif
