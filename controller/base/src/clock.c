/* The system clock. */
#include "po/base/clock.h"

#include <errno.h>
#include <time.h>

static int64_t sys_mono(void *ctx) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t sys_wall(void *ctx) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sys_sleep(void *ctx, int64_t ns) {
  if (ns <= 0) return;
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static const po_Clock kSystem = {sys_mono, sys_wall, sys_sleep, 0};

const po_Clock *po_Clock_System(void) { return &kSystem; }
