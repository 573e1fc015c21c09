/*
 * signals.c — how a run stops (DESIGN.md §6; signals.h says what the
 * callers see).  Signals are never taken by a handler: every terminating
 * one is blocked in every thread and one thread sigwait()s, so the first
 * can set a plain flag and the second can run ordinary code (the cleanups)
 * before _exit.
 */
#include "signals.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* sig_on_exit's cleanups: written under reg_mu, published by the count,
 * which the signal thread reads without the lock. */
#define SIG_CLEANUP_MAX 8
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static void (*cleanups[SIG_CLEANUP_MAX])(void);
static int ncleanups;

int sig_on_exit(void (*fn)(void))
{
    int n, rc = -1;
    pthread_mutex_lock(&reg_mu);
    n = __atomic_load_n(&ncleanups, __ATOMIC_RELAXED);
    if (n < SIG_CLEANUP_MAX) {
        cleanups[n] = fn;
        __atomic_store_n(&ncleanups, n + 1, __ATOMIC_RELEASE);
        rc = 0;
    }
    pthread_mutex_unlock(&reg_mu);
    return rc;
}

/* The second signal's cleanups, in the order registered. */
static void run_cleanups(void)
{
    int n = __atomic_load_n(&ncleanups, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        cleanups[i]();
}

volatile int sig_stop;
static int sig_winch_seen;

static sigset_t sig_set;

static void *sig_thread(void *arg)
{
    (void)arg;
    for (;;) {
        int sig = 0;
        if (sigwait(&sig_set, &sig) != 0)
            continue;
        if (sig == SIGWINCH) {
            /* the terminal's size changed: the progress line asks again */
            __atomic_store_n(&sig_winch_seen, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (__atomic_load_n(&sig_stop, __ATOMIC_SEQ_CST) == 0) {
            /* First signal: ask the work to unwind (in-flight frames
             * finish, temps are removed by so_abort). */
            __atomic_store_n(&sig_stop, sig, __ATOMIC_SEQ_CST);
            continue;
        }
        /* Second signal: the user means it. */
        run_cleanups();
        _exit(128 + sig);
    }
    return NULL;
}

/* Every signal whose default action ends the process (signal(7)), but for
 * the ones a fault raises in the thread that caused it (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP: no other thread can wait for
 * them) and SIGPIPE/SIGXFSZ (ignored: the write reports the error); the
 * real-time signals are added by number. */
static const int term_sigs[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
    SIGPROF, SIGXCPU, SIGIO, SIGPWR, SIGSTKFLT,
};

/* A signal the parent left ignored stays ignored (a shell's `gpuedge &`
 * ignores SIGINT and SIGQUIT, nohup SIGHUP): it is not waited for. */
static void add_term_sig(int sig)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
        old.sa_handler == SIG_IGN)
        return;
    sigaddset(&sig_set, sig);
}

const char *sig_name(int sig)
{
    static char buf[32];
    const char *abbrev = sig < SIGRTMIN || sig > SIGRTMAX ? sigabbrev_np(sig) : NULL;
    if (abbrev)
        snprintf(buf, sizeof buf, "SIG%s", abbrev);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, sizeof buf, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, sizeof buf, "signal %d", sig);
    return buf;
}

int sig_init(void)
{
    static int started;
    struct sigaction sa;
    int i;
    sigset_t old;
    pthread_attr_t attr;
    pthread_t tid;
    int rc;

    if (started)
        return 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL); /* EPIPE from write instead */
    sigaction(SIGXFSZ, &sa, NULL); /* EFBIG from write instead */

    sigemptyset(&sig_set);
    for (i = 0; i < (int)(sizeof term_sigs / sizeof term_sigs[0]); i++)
        add_term_sig(term_sigs[i]);
    for (i = SIGRTMIN; i <= SIGRTMAX; i++)
        add_term_sig(i);
    /* Not a terminating one: waited for too, rather than caught by a
     * handler, so that a resize never interrupts a system call in a
     * worker (EINTR); one inherited as ignored stays ignored. */
    add_term_sig(SIGWINCH);
    /* Every thread created from now on inherits the mask, so only the
     * sigwait thread ever takes these signals. */
    if (pthread_sigmask(SIG_BLOCK, &sig_set, &old) != 0)
        return -1;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&tid, &attr, sig_thread, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        errno = rc;
        return -1;
    }
    started = 1;
    return 0;
}

int sig_winched(void)
{
    return __atomic_exchange_n(&sig_winch_seen, 0, __ATOMIC_RELAXED);
}

int sig_exit_status(void)
{
    int sig = __atomic_load_n(&sig_stop, __ATOMIC_SEQ_CST);
    return sig ? 128 + sig : GE_EXIT_FAIL;
}
