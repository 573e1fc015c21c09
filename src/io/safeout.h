/*
 * safeout.h — never lose data (DESIGN.md §6).
 *
 * An output is written to an unnamed temporary file in its directory
 * (O_TMPFILE; where the filesystem has none, a named one beside its final
 * name: mkstemp, fchmod 0666 & ~umask), through checked writes, fsync'ed
 * and linked or renamed into place, never over an existing file unless
 * overwriting is allowed.  On failure or interruption the temp file is
 * removed, or kept as NAME.partial.EXT with --keep-partial.  A non-regular output
 * (/dev/null, a FIFO, "-" = stdout) is written directly.
 *
 * Signals (signals.h): the work polls sig_stop and unwinds through
 * so_abort; on a second terminating signal every open so_file's temp file
 * is removed (kept as .partial with --keep-partial) before the exit, so
 * every open so_file is registered, error paths' too.
 */
#ifndef GPUEDGE_SAFEOUT_H
#define GPUEDGE_SAFEOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct so_file so_file;

typedef struct so_opts {
    int overwrite;    /* -y: replace an existing final file */
    int keep_partial; /* --keep-partial */
} so_opts;

/* Opens `path` for writing per the rules above.  Fails (why recorded for
 * `path`, DESIGN.md §9; returns -1, *out NULL) when the final file exists and overwrite is off,
 * the directory is missing or unwritable, or `path` is the same file as
 * one of the `ninputs` inputs (st_dev/st_ino). */
int so_open(so_file **out, const char *path, const so_opts *opts,
            const char *const *inputs, int ninputs);

/* Checked write: records the first error (errno) and returns -1 once
 * anything failed; later writes are no-ops. */
int so_write(so_file *f, const void *buf, size_t len);
/* Checked write of bytes already written once, at offset `at` of a
 * regular output (the fields a muxer fills in at the end), after what
 * so_write buffered; a direct output fails it (ESPIPE).  Records the
 * first error like so_write; 0 or -1. */
int so_pwrite(so_file *f, const void *buf, size_t len, off_t at);
/* stb_image_write's callback signature (context = so_file *). */
void so_stb_writer(void *context, void *data, int size);

/* The file descriptor and the path being written (the temp name, or the
 * final one for a direct output); for libav, which writes by itself. */
int so_fd(const so_file *f);
const char *so_path(const so_file *f);
/* The final name (for messages). */
const char *so_name(const so_file *f);
/* Starts writing the file's bytes before `upto` back to the disk, once
 * 32 MiB more than last time are waiting (sync_file_range: no wait), so
 * that so_commit's fsync has little left.  so_write does it by itself;
 * libav, which writes the temp file by itself, calls it with its
 * position.  No-op for direct outputs. */
void so_writeback(so_file *f, off_t upto);
/* Bytes from the start whose writeback so_writeback has started. */
off_t so_writeback_started(const so_file *f);
/* Marks the file failed with errno-style `err` (e.g. a muxer error). */
void so_fail(so_file *f, int err);
/* The same, when the caller has recorded the one line the failure gets:
 * nothing more is said about it. */
void so_fail_reported(so_file *f, int err);

/* Flushes, fsyncs, closes and renames into place.  Returns 0, or -1 with
 * why recorded and the temp file removed (or kept as .partial). */
int so_commit(so_file **f);
/* Abandons the output: temp removed (or kept as .partial).  A write error
 * nobody reported yet is recorded (the caller prints it: ge_err_pending).
 * NULL-safe, sets *f to NULL; safe to call twice. */
void so_abort(so_file **f);

/* 1 (the default): unnamed temp files where the filesystem has O_TMPFILE;
 * 0: always named ones, as on a filesystem without (for tests of that
 * path).  Set before any so_open. */
void so_use_tmpfile(int on);

/* Is `path` the same file as any input?  1 yes, 0 no (missing output). */
int so_same_file(const char *path, const char *const *inputs, int ninputs);

/* In main after sig_init, before any other thread starts: reads the umask
 * where /proc does not show it (umask() must set it to read it, racy
 * against a thread creating a file), and registers the temp files'
 * removal with the second signal (sig_on_exit).  Once; so_open registers
 * that removal by itself too, so a program without so_init loses only the
 * early umask. */
void so_init(void);

#endif
