// par.h -- a team of at most two threads that splits the forward pass's loops.
//
// par_run(n, fn, ctx) calls fn(ctx, i) once for every task i in [0, n) and returns when all
// are done. With one thread (the default) that is a plain loop on the calling thread. With two,
// the calling thread and a worker thread take the tasks in order from a shared counter, so a
// thread slowed by other programs simply does fewer. The worker is started on first use and
// lives until the process ends; between jobs it spins for at most 50 µs, then sleeps on a
// condition variable, so an idle team takes no CPU from a shared machine. Tasks of one job must
// write disjoint memory and must not call par_run. One caller thread at a time.
//
//     static void block_task(void *ctx, int i) { ... }
//     par_set_threads(2);
//     par_run(4, block_task, &job);   // blocks 0..3, two on each thread unless one lags
#ifndef SF_PAR_H
#define SF_PAR_H

// Sets the team size: 1 or 2 (values outside are clamped). Returns the size in effect.
int par_set_threads(int n);
int par_threads(void);

typedef void (*ParTask)(void *ctx, int task);
void par_run(int n_tasks, ParTask fn, void *ctx);

#endif
