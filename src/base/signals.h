/*
 * signals.h — how a run stops (DESIGN.md §6).
 *
 * sig_init() must run first in main, before CUDA or libav can start
 * threads: it blocks every signal whose default is to terminate (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM ..., but not the fault
 * signals, and not one inherited as ignored) in every thread, ignores
 * SIGPIPE and SIGXFSZ, and starts one thread that sigwait()s.  The first
 * signal raises the stop flag: work polls sig_stop (or sig_stopped()) and
 * unwinds, and the process exits 128 + N (sig_exit_status).  A second one
 * runs the cleanups given to sig_on_exit, then _exit(128 + N) at once.
 * That thread also takes SIGWINCH (unless inherited as ignored) and only
 * notes it, for sig_winched().
 */
#ifndef GPUEDGE_SIGNALS_H
#define GPUEDGE_SIGNALS_H

int sig_init(void);          /* 0, or -1 (cannot start the thread) */
extern volatile int sig_stop; /* 0, or the signal number that arrived */
static inline int sig_stopped(void) { return sig_stop; }
/* 1 once after each SIGWINCH (the terminal was resized), else 0. */
int sig_winched(void);
/* Exit status for an interruption: 128 + signal (130 SIGINT, 143 SIGTERM). */
int sig_exit_status(void);
/* "SIGHUP", "SIGRTMIN+2" (static buffer: one caller at a time). */
const char *sig_name(int sig);

/* Registers fn to run on the second signal, before the exit, after those
 * registered before it.  It runs on the signal thread while the others
 * still run, so it must not wait for them (a short lock is fine) and
 * keeps to async-signal-safe calls (unlink, rename, link: no stdio, no
 * malloc).  Any thread, any time; 0, or -1 when 8 are registered. */
int sig_on_exit(void (*fn)(void));

#endif
