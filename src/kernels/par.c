// par.c -- see par.h. One worker thread and one job at a time. The two threads take the job's
// tasks in order from a shared counter, so a thread that the system slows down takes fewer. A
// thread that runs out of work waits for the other by spinning for a short while (jobs of a
// forward pass follow each other within microseconds) and then sleeps on a condition variable.
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "err.h" // defines: EXPECT

enum { SPIN_NS = 50 * 1000 }; // how long a waiting thread spins before it sleeps

static struct {
  pthread_mutex_t mu;
  pthread_cond_t go, done; // a job was posted / the worker finished one
  atomic_ulong job;        // number of the latest job
  atomic_ulong finished;   // number of the latest job the worker has finished
  atomic_int next;         // the next task of the job to take
  int n_tasks;
  ParTask fn;
  void *ctx;
  bool started;
} team = {.mu = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static int n_threads = 1;

int par_set_threads(int n) {
  n_threads = n < 1 ? 1 : n > 2 ? 2 : n;
  return n_threads;
}

int par_threads(void) { return n_threads; }

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until *v == want or SPIN_NS pass; true when it got there.
static bool spin_until(atomic_ulong *v, unsigned long want) {
  long t0 = now_ns();
  for (int i = 0;; i++) {
    if (atomic_load_explicit(v, memory_order_acquire) == want) return true;
    cpu_relax();
    if (i % 64 == 63 && now_ns() - t0 > SPIN_NS) return false;
  }
}

static void take_tasks(void) {
  int i;
  while ((i = atomic_fetch_add_explicit(&team.next, 1, memory_order_relaxed)) < team.n_tasks)
    team.fn(team.ctx, i);
}

static void *worker(void *arg) {
  (void)arg;
  unsigned long seen = 0;
  for (;;) {
    if (!spin_until(&team.job, seen + 1)) {
      pthread_mutex_lock(&team.mu);
      while (atomic_load(&team.job) == seen) pthread_cond_wait(&team.go, &team.mu);
      pthread_mutex_unlock(&team.mu);
    }
    seen++;
    take_tasks();
    atomic_store_explicit(&team.finished, seen, memory_order_release);
    pthread_mutex_lock(&team.mu);
    pthread_cond_signal(&team.done);
    pthread_mutex_unlock(&team.mu);
  }
  return NULL;
}

// Starts the worker once; false when the system refuses a thread (then everything runs here).
static bool team_start(void) {
  if (team.started) return true;
  pthread_t th;
  if (pthread_create(&th, NULL, worker, NULL) != 0) return false;
  pthread_detach(th);
  team.started = true;
  return true;
}

void par_run(int n_tasks, ParTask fn, void *ctx) {
  if (n_threads == 1 || n_tasks < 2 || !team_start()) {
    for (int i = 0; i < n_tasks; i++) fn(ctx, i);
    return;
  }
  unsigned long job = atomic_load(&team.job) + 1;
  EXPECT(atomic_load(&team.finished) == job - 1); // one job at a time
  team.fn = fn, team.ctx = ctx, team.n_tasks = n_tasks;
  atomic_store_explicit(&team.next, 0, memory_order_relaxed);
  pthread_mutex_lock(&team.mu); // publishes the job; wakes the worker if it sleeps
  atomic_store(&team.job, job);
  pthread_cond_signal(&team.go);
  pthread_mutex_unlock(&team.mu);
  take_tasks();
  if (!spin_until(&team.finished, job)) {
    pthread_mutex_lock(&team.mu);
    while (atomic_load(&team.finished) != job) pthread_cond_wait(&team.done, &team.mu);
    pthread_mutex_unlock(&team.mu);
  }
}
