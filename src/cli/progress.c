/*
 * progress.c — the progress line on stderr (DESIGN.md §3).
 *
 * On a terminal: one line, redrawn in place at most four times a second
 * ("\r", the text, "\033[K" erasing what a longer line left), never wider
 * than the terminal less one column, so that it never wraps (a wrapped
 * line cannot be redrawn in place: each redraw would leave a stale row).
 * The width is asked (TIOCGWINSZ) at the start and again after a SIGWINCH
 * (sig_winched); 80 columns when the terminal does not say.  What does not
 * fit goes in this order: the file name's middle, "gpuedge: ", the ETA,
 * the rate, the name; then the rest is cut.  Messages printed meanwhile
 * erase the line first (ge_line_clear), the next redraw brings it back.
 *
 * Elsewhere (--progress with stderr a file or a pipe, a log): plain lines,
 * no control characters, one every few seconds and a last one per video,
 * as a log reader expects (like wget's or buildkit's plain progress).
 *
 * Only the writer thread of the first engine draws (engines.c).
 */
#include "run_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util.h"

#define PROG_TTY_EVERY 0.25  /* s between redraws on a terminal */
#define PROG_PLAIN_EVERY 2.0 /* s between plain lines */
#define PROG_COLS_UNKNOWN 80 /* a terminal that does not tell its width */
/* A rate over less than this (s, frames) says more about the start-up
 * than about the file: not shown yet. */
#define PROG_RATE_AFTER_S 0.5
#define PROG_RATE_AFTER_FRAMES 2

static int cols;  /* the terminal's width (PROG_TTY) */
static int shown; /* a line stands on the terminal */

static int term_cols(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return PROG_COLS_UNKNOWN;
}

void prog_init(run_ctx *c)
{
    const cli_opts *o = c->o;
    int tty = isatty(STDERR_FILENO);
    c->progress = PROG_OFF;
    if (o->progress > 0 || (o->progress < 0 && !o->quiet && tty))
        c->progress = tty ? PROG_TTY : PROG_PLAIN;
    if (c->progress == PROG_TTY) {
        cols = term_cols();
        ge_line_clear = 1;
    }
}

static void put(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* a progress line is not worth an error */
        p += w;
        n -= (size_t)w;
    }
}

void prog_end(run_ctx *c)
{
    if (c->progress == PROG_TTY && shown)
        put("\r\033[K", 4);
    shown = 0;
    ge_line_clear = 0;
}

// ---------------------------------------------------------------------------
// Columns

/* Characters a terminal shows two columns wide (East Asian wide and full
 * width, emoji), generously: a line a column short is harmless, one a
 * column long wraps. */
static int is_wide(unsigned cp)
{
    static const unsigned wide[][2] = {
        {0x1100, 0x115F},   {0x2300, 0x23FF},   {0x2600, 0x27BF},   {0x2B00, 0x2BFF},
        {0x2E80, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
        {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
        {0x16FE0, 0x1B2FF}, {0x1F000, 0x1FAFF}, {0x20000, 0x3FFFD},
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 1;
    return 0;
}

/* The next character of a file name (s not at its end): *n its bytes;
 * returns its columns, or 0 for one shown as '?': a control character (C0
 * or C1: they would move the cursor), a bidi or zero-width format
 * character, a byte that is not UTF-8.  A combining mark counts as 1. */
static int char_cols(const unsigned char *s, size_t *n)
{
    unsigned c = s[0], cp, need, min;
    *n = 1;
    if (c < 0x80)
        return c < 0x20 || c == 0x7f ? 0 : 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (unsigned i = 1; i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0; /* (a NUL ends the loop here too) */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *n = need + 1;
    if (cp < 0xA0 || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
        (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF)
        return 0;
    return is_wide(cp) ? 2 : 1;
}

/* Columns of s as put_name shows it. */
static int name_cols(const char *s)
{
    int w = 0;
    for (size_t n; *s; s += n) {
        int k = char_cols((const unsigned char *)s, &n);
        w += k ? k : 1;
    }
    return w;
}

typedef struct line {
    char b[8192];
    size_t len;
} line;

static void add(line *l, const char *s, size_t n)
{
    if (n > sizeof l->b - 1 - l->len)
        n = sizeof l->b - 1 - l->len;
    memcpy(l->b + l->len, s, n);
    l->len += n;
}

static void adds(line *l, const char *s)
{
    add(l, s, strlen(s));
}

/* Appends name as the terminal shows it (put '?' for what char_cols
 * refuses), in at most `room` columns (< 0: no limit): a longer name
 * loses its middle to "...", keeping its start (the directory) and, in
 * twice the room, its end (the file's own name). */
static void put_name(line *l, const char *name, int room)
{
    int total = name_cols(name), c = 0, dots = 0;
    int cut = room >= 0 && total > room;
    int head = cut ? (room - 3) / 3 : 0, tail = cut ? room - 3 - head : 0;
    if (cut && room < 4) {
        add(l, "...", (size_t)(room > 0 ? room : 0));
        return;
    }
    for (const char *p = name; *p;) {
        size_t n;
        int k = char_cols((const unsigned char *)p, &n), w = k ? k : 1;
        if (cut && c + w > head && total - c > tail) {
            if (!dots)
                adds(l, "...");
            dots = 1;
        } else if (k) {
            add(l, p, n);
        } else {
            adds(l, "?");
        }
        c += w;
        p += n;
    }
}

/* Cuts the line (ASCII and put_name's output) to `room` columns. */
static void cut_line(line *l, int room)
{
    int c = 0;
    size_t i = 0, n;
    l->b[l->len] = '\0';
    while (i < l->len) {
        int k = char_cols((const unsigned char *)l->b + i, &n), w = k ? k : 1;
        if (c + w > room)
            break;
        c += w;
        i += n;
    }
    l->len = i;
}

// ---------------------------------------------------------------------------
// The line

/* The pieces of one line, each optional but the name. */
typedef struct pieces {
    char count[48]; /* "[3/48] " */
    char frames[48]; /* ": frame 120/750" */
    char rate[32];  /* ", 96.3 fps" */
    char eta[32];   /* ", ETA 7 s", or how it ended: ", done in 7.80 s" */
} pieces;

static void make_pieces(const run_ctx *c, const job *j, long frames, int done, pieces *p)
{
    double now = ge_now(), t = now - c->job_t0;
    int meaningful = j->video_in && frames >= PROG_RATE_AFTER_FRAMES && t >= PROG_RATE_AFTER_S;
    double fps = meaningful ? frames / t : 0;
    /* a container's frame count is a guess: past it, no total and no ETA */
    long total = j->total >= frames ? j->total : 0;
    memset(p, 0, sizeof *p);
    if (c->batch && c->njobs > 1)
        snprintf(p->count, sizeof p->count, "[%ld/%d] ", (long)(j - c->jobs) + 1, c->njobs);
    if (!j->video_in)
        return; /* an image of a batch: which one is all there is to say */
    if (total > 0)
        snprintf(p->frames, sizeof p->frames, ": frame %ld/%ld", frames, total);
    else
        snprintf(p->frames, sizeof p->frames, ": frame %ld", frames);
    if (done) /* (the last plain line: its job decided) */
        snprintf(p->eta, sizeof p->eta, ", %s %.2f s",
                 j->state == JOB_OK ? "done in" : sig_stopped() ? "stopped after" : "failed after",
                 t);
    if (fps > 0)
        snprintf(p->rate, sizeof p->rate, ", %.1f fps", fps);
    if (fps > 0 && total > 0 && !done)
        snprintf(p->eta, sizeof p->eta, ", ETA %.0f s", (total - frames) / fps);
}

/* The line in `room` columns (see the top of the file for what goes
 * first).  Each level drops a piece and lets the name shrink further. */
static void fit_line(line *l, const char *name, const pieces *p, int room)
{
    static const struct {
        int prog, eta, rate, name_min;
    } level[] = {{1, 1, 1, 20}, {0, 1, 1, 12}, {0, 0, 1, 10}, {0, 0, 0, 8}, {0, 0, 0, 5}};
    int nw = name_cols(name);
    for (size_t i = 0; i < sizeof level / sizeof level[0]; i++) {
        int fixed = (int)(strlen(p->count) + strlen(p->frames)) +
                    (level[i].prog ? (int)strlen(GE_PROG ": ") : 0) +
                    (level[i].eta ? (int)strlen(p->eta) : 0) +
                    (level[i].rate ? (int)strlen(p->rate) : 0);
        if (room - fixed < (nw < level[i].name_min ? nw : level[i].name_min))
            continue;
        if (level[i].prog)
            adds(l, GE_PROG ": ");
        adds(l, p->count);
        put_name(l, name, room - fixed);
        adds(l, p->frames);
        if (level[i].rate)
            adds(l, p->rate);
        if (level[i].eta)
            adds(l, p->eta);
        return;
    }
    /* narrower still: the count and the frame, without the name */
    adds(l, p->count);
    if (p->frames[0])
        adds(l, p->frames + 2); /* "frame F/T" */
    else
        put_name(l, name, room > (int)strlen(p->count) ? room - (int)strlen(p->count) : 0);
    cut_line(l, room);
}

/* Draws the line of job j (frames written so far); done: its output is
 * closed and the job decided (the terminal's line is erased; a video's
 * last plain line says how it ended). */
void prog_draw(run_ctx *c, const job *j, long frames, int done)
{
    double now = ge_now();
    line l = {.len = 0}, t = {.len = 0};
    pieces p;
    if (c->progress == PROG_OFF)
        return;
    if (done && (c->progress == PROG_TTY || !j->video_in)) {
        if (shown)
            put("\r\033[K", 4);
        shown = 0;
        return;
    }
    if (!done && now - c->last_progress <
                     (c->progress == PROG_TTY ? PROG_TTY_EVERY : PROG_PLAIN_EVERY))
        return;
    c->last_progress = now;
    make_pieces(c, j, frames, done, &p);
    if (c->progress == PROG_PLAIN) {
        adds(&l, GE_PROG ": ");
        adds(&l, p.count);
        put_name(&l, j->input, -1);
        adds(&l, p.frames);
        adds(&l, p.rate);
        adds(&l, p.eta);
        adds(&l, "\n");
        put(l.b, l.len);
        return;
    }
    if (sig_winched())
        cols = term_cols();
    fit_line(&t, j->input, &p, cols - 1);
    adds(&l, "\r");
    add(&l, t.b, t.len);
    adds(&l, "\033[K");
    put(l.b, l.len);
    shown = 1;
}
