/* Envoy's own checks on google.protobuf.Duration values. Envoy runs them on every Duration of a
 * config it loads (MessageUtil::validateDurationFields, source/common/protobuf/utility.cc) and
 * refuses the whole resource on the first failure, with "Invalid duration: Expected positive
 * duration" or "Duration out-of-range". protoc-gen-validate's rules come after these. */
#include <inttypes.h>

#include "compiled.h"

enum { kMaxNanos = 999999999 };
static const int64_t kMaxSeconds = INT64_C(315576000000); /* 10,000 years, protobuf's own bound */

static const char *shown(bool has, int64_t v, po_Arena *a) {
  return has ? po_Arena_Printf(a, "%" PRId64, v) : "(as set)";
}

const char *po_Duration_Check(bool has_seconds, int64_t seconds, bool has_nanos, int64_t nanos,
                              po_Arena *a) {
  if ((has_seconds && seconds < 0) || (has_nanos && nanos < 0)) {
    return po_Arena_Printf(a,
                           "Envoy refuses a negative Duration (seconds %s, nanos %s): \"Expected positive "
                           "duration\"; seconds and nanos must both be >= 0",
                           shown(has_seconds, seconds, a), shown(has_nanos, nanos, a));
  }
  if ((has_seconds && seconds > kMaxSeconds) || (has_nanos && nanos > kMaxNanos)) {
    return po_Arena_Printf(a,
                           "Duration out of range (seconds %s, nanos %s): Envoy refuses it (\"Duration "
                           "out-of-range\"); seconds must be at most %" PRId64 " and nanos at most %d",
                           shown(has_seconds, seconds, a), shown(has_nanos, nanos, a), kMaxSeconds, kMaxNanos);
  }
  return NULL;
}
