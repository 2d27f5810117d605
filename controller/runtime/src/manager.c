/* Runnables, leadership and signals. */
#include "po/runtime/manager.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "po/runtime/clock.h"

typedef struct {
  po_Runnable r;
  char *name;
  bool started;
} Entry;

struct po_Manager {
  po_ManagerOptions o;
  pthread_mutex_t mu; /* serialises transitions (held while runnables start and stop) */
  Entry *items;
  size_t n, cap;
  bool started, stopping, stopped, leader, failed;
  bool stop_ok;
  po_Series *m_leader;
  int wake[2]; /* self-pipe: 's' signal, 'r' RequestStop, 'd' stop finished, 'f' start failed */
};

/* The signal handler can reach no manager but through a process-wide slot: SIGTERM and SIGINT
 * belong to the process, not to a manager. So one po_Manager_Run owns them at a time: it claims
 * the slot with a compare-and-swap and gives it back on return; a second concurrent Run is refused
 * instead of silently taking the first one's signals (a lock-free atomic int is async-signal-safe
 * to read). */
static _Atomic int g_signal_owner_fd = -1;

static void on_signal(int sig) {
  int saved = errno;
  int fd = atomic_load(&g_signal_owner_fd);
  if (fd >= 0) {
    char c = 's';
    ssize_t ignored = write(fd, &c, 1);
    (void)ignored;
  }
  errno = saved;
}

static void wake(po_Manager *m, char c) {
  if (m->wake[1] < 0) return;
  ssize_t ignored = write(m->wake[1], &c, 1);
  (void)ignored;
}

po_Manager *po_Manager_New(const po_ManagerOptions *opts, po_CtlStatus *st) {
  po_Manager *m = calloc(1, sizeof *m);
  if (!m) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "manager: out of memory");
    return NULL;
  }
  if (opts) m->o = *opts;
  if (m->o.stop_timeout_ns <= 0) m->o.stop_timeout_ns = 30 * PO_NS_PER_S;
  if (pipe(m->wake) != 0) {
    free(m);
    po_CtlStatus_Set(st, kPo_Ctl_System, "manager: pipe: %s", strerror(errno));
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    fcntl(m->wake[i], F_SETFD, FD_CLOEXEC);
  }
  /* The write end never blocks a signal handler: a full pipe already means "wake up". */
  fcntl(m->wake[1], F_SETFL, O_NONBLOCK);
  pthread_mutex_init(&m->mu, NULL);
  if (m->o.lease_name) {
    m->m_leader = po_Family_WithLabels(po_Metrics_Find(m->o.metrics, PO_M_LEADER), m->o.lease_name);
    po_Series_Set(m->m_leader, 0);
  }
  return m;
}

void po_Manager_Free(po_Manager *m) {
  if (!m) return;
  if (m->started) po_Manager_Stop(m);
  for (size_t i = 0; i < m->n; i++) free(m->items[i].name);
  free(m->items);
  close(m->wake[0]);
  close(m->wake[1]);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

bool po_Manager_Add(po_Manager *m, const po_Runnable *r, po_CtlStatus *st) {
  if (!r || !r->start || !r->stop)
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "manager: a runnable needs start and stop");
  pthread_mutex_lock(&m->mu);
  if (m->started) {
    pthread_mutex_unlock(&m->mu);
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "manager: runnable \"%s\" added after Start",
                           r->name ? r->name : "");
  }
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 8;
    Entry *items = realloc(m->items, cap * sizeof *items);
    if (!items) {
      pthread_mutex_unlock(&m->mu);
      return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "manager: out of memory");
    }
    m->items = items;
    m->cap = cap;
  }
  Entry *e = &m->items[m->n];
  *e = (Entry){.r = *r, .name = strdup(r->name ? r->name : "runnable")};
  if (!e->name) {
    pthread_mutex_unlock(&m->mu);
    return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "manager: out of memory");
  }
  e->r.name = e->name;
  m->n++;
  pthread_mutex_unlock(&m->mu);
  return true;
}

/* Starts the group's runnables in order; on a failure stops the ones just started. Under mu. */
static bool start_group(po_Manager *m, bool leader, po_CtlStatus *st) {
  for (size_t i = 0; i < m->n; i++) {
    Entry *e = &m->items[i];
    if (e->r.needs_leader != leader || e->started) continue;
    po_CtlStatus inner;
    po_CtlStatus_Clear(&inner);
    if (!e->r.start(e->r.ctx, &inner)) {
      po_Log_Error(m->o.log, "runnable failed to start", po_Str("runnable", e->name),
                   po_Str("error", inner.message));
      int64_t deadline = po_RtClock_Now(po_RtClock_Real()) + m->o.stop_timeout_ns;
      for (size_t j = i; j-- > 0;) {
        Entry *s = &m->items[j];
        if (s->r.needs_leader == leader && s->started) {
          s->r.stop(s->r.ctx, deadline);
          s->started = false;
        }
      }
      return po_CtlStatus_Set(st, kPo_Ctl_Start, "runnable \"%s\" failed to start: %s", e->name,
                             inner.message);
    }
    e->started = true;
    po_Log_Debug(m->o.log, "runnable started", po_Str("runnable", e->name),
                 po_Bool("needs_leader", leader));
  }
  return true;
}

typedef enum { kLeaders, kEarly, kOthers } Group;

static bool in_group(const Entry *e, Group g) {
  switch (g) {
    case kLeaders: return e->r.needs_leader;
    case kEarly: return !e->r.needs_leader && e->r.stop_early;
    case kOthers: return !e->r.needs_leader && !e->r.stop_early;
  }
  return false;
}

/* Stops the group's started runnables in reverse order. Under mu. */
static bool stop_group(po_Manager *m, Group group, int64_t deadline) {
  bool ok = true;
  for (size_t i = m->n; i-- > 0;) {
    Entry *e = &m->items[i];
    if (!in_group(e, group) || !e->started) continue;
    bool stopped = e->r.stop(e->r.ctx, deadline);
    e->started = false;
    if (!stopped) {
      ok = false;
      po_Log_Warn(m->o.log, "runnable did not stop before the deadline",
                  po_Str("runnable", e->name));
    } else {
      po_Log_Debug(m->o.log, "runnable stopped", po_Str("runnable", e->name));
    }
  }
  return ok;
}

bool po_Manager_Start(po_Manager *m, po_CtlStatus *st) {
  pthread_mutex_lock(&m->mu);
  if (m->started || m->stopping) {
    pthread_mutex_unlock(&m->mu);
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "manager: already started");
  }
  bool ok = start_group(m, false, st);
  m->started = ok;
  pthread_mutex_unlock(&m->mu);
  if (ok) po_Log_Info(m->o.log, "manager started", po_Int("runnables", (int64_t)m->n));
  return ok;
}

bool po_Manager_BecameLeader(po_Manager *m, po_CtlStatus *st) {
  pthread_mutex_lock(&m->mu);
  if (!m->started || m->stopping || m->leader) {
    pthread_mutex_unlock(&m->mu);
    return true; /* too early, too late, or already leading: nothing to do */
  }
  m->leader = true;
  po_Series_Set(m->m_leader, 1);
  po_Log_Info(m->o.log, "became leader", po_Str("lease", m->o.lease_name));
  bool ok = start_group(m, true, st);
  if (!ok) m->failed = true;
  pthread_mutex_unlock(&m->mu);
  if (!ok) wake(m, 'f');
  return ok;
}

void po_Manager_LostLeadership(po_Manager *m) {
  pthread_mutex_lock(&m->mu);
  if (m->leader) {
    m->leader = false;
    po_Series_Set(m->m_leader, 0);
    po_Log_Warn(m->o.log, "lost leadership: stopping leader runnables",
                po_Str("lease", m->o.lease_name));
    stop_group(m, kLeaders, po_RtClock_Now(po_RtClock_Real()) + m->o.stop_timeout_ns);
  }
  pthread_mutex_unlock(&m->mu);
}

bool po_Manager_IsLeader(po_Manager *m) {
  pthread_mutex_lock(&m->mu);
  bool l = m->leader;
  pthread_mutex_unlock(&m->mu);
  return l;
}

/* notify: Run's stopper thread writes 'd' before unlocking, so once another Stop returns nobody
 * touches the manager any more (it may be freed). */
static bool stop(po_Manager *m, bool notify) {
  pthread_mutex_lock(&m->mu);
  if (m->stopping) {
    bool ok = m->stop_ok;
    if (notify) wake(m, 'd');
    pthread_mutex_unlock(&m->mu);
    return ok;
  }
  m->stopping = true;
  int64_t deadline = po_RtClock_Now(po_RtClock_Real()) + m->o.stop_timeout_ns;
  po_Log_Info(m->o.log, "stopping", po_Int("timeout_ms", m->o.stop_timeout_ns / PO_NS_PER_MS));
  bool ok = stop_group(m, kEarly, deadline);
  ok = stop_group(m, kLeaders, deadline) && ok;
  if (m->leader) {
    m->leader = false;
    po_Series_Set(m->m_leader, 0);
    /* Only once no worker runs: releasing earlier would let a new leader reconcile alongside. */
    if (m->o.release_lease && !m->o.release_lease(m->o.release_ctx, deadline)) {
      ok = false;
      po_Log_Warn(m->o.log, "could not release the lease", po_Str("lease", m->o.lease_name));
    }
  }
  ok = stop_group(m, kOthers, deadline) && ok;
  m->stopped = true;
  m->stop_ok = ok;
  po_Log_Info(m->o.log, ok ? "stopped" : "stopped with errors");
  if (notify) wake(m, 'd');
  pthread_mutex_unlock(&m->mu);
  return ok;
}

bool po_Manager_Stop(po_Manager *m) { return stop(m, false); }

void po_Manager_RequestStop(po_Manager *m) { wake(m, 'r'); }

static void *stopper_main(void *arg) {
  stop(arg, true);
  return NULL;
}

/* Reads one wake byte; 0 on timeout (timeout_ms < 0: none). */
static char wait_wake(po_Manager *m, int timeout_ms) {
  struct pollfd p = {.fd = m->wake[0], .events = POLLIN};
  for (;;) {
    int rc = poll(&p, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue; /* our own handler ran: the byte is in the pipe */
    if (rc <= 0) return 0;
    char c;
    ssize_t n = read(m->wake[0], &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    return 0;
  }
}

static int give_up(po_Manager *m, const char *why) {
  po_Log_Error(m->o.log, why);
  if (m->o.exit_process_on_timeout) _exit(1);
  return 1;
}

int po_Manager_Run(po_Manager *m) {
  struct sigaction sa, old_term, old_int;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART; /* other threads' blocking calls should not see EINTR because of us */
  sigemptyset(&sa.sa_mask);
  int unowned = -1;
  if (!atomic_compare_exchange_strong(&g_signal_owner_fd, &unowned, m->wake[1])) {
    po_Log_Error(m->o.log, "another manager is running and owns SIGTERM/SIGINT: one po_Manager_Run at a time per process");
    return 1;
  }
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGINT, &sa, &old_int);

  int code = 0;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  if (!po_Manager_Start(m, &st)) {
    po_Log_Error(m->o.log, "manager failed to start", po_Str("error", st.message));
    code = 1;
    goto out;
  }
  char why = wait_wake(m, -1);
  po_Log_Info(m->o.log, why == 's'   ? "received a termination signal, stopping"
                        : why == 'f' ? "a leader runnable failed, stopping"
                                     : "stop requested");
  if (why == 'f') code = 1;
  pthread_t stopper;
  if (pthread_create(&stopper, NULL, stopper_main, m) != 0) {
    code = po_Manager_Stop(m) ? code : 1;
    goto out;
  }
  int64_t deadline = po_RtClock_Now(po_RtClock_Real()) + m->o.stop_timeout_ns;
  for (;;) {
    int64_t left = deadline - po_RtClock_Now(po_RtClock_Real());
    char c = left > 0 ? wait_wake(m, (int)((left + PO_NS_PER_MS - 1) / PO_NS_PER_MS)) : 0;
    if (c == 'd') {
      pthread_join(stopper, NULL);
      if (!m->stop_ok) code = 1;
      break;
    }
    if (c == 's' || c == 0) {
      pthread_detach(stopper);
      code = give_up(m, c == 's' ? "second signal: exiting without waiting for the stop"
                                 : "stop deadline exceeded: exiting");
      /* The stopper still runs: the caller must exit, not free the manager. */
      break;
    }
    /* 'r' or 'f' during the stop: already stopping. */
  }
out:
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGINT, &old_int, NULL);
  atomic_store(&g_signal_owner_fd, -1);
  return code;
}
