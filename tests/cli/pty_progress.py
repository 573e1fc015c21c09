#!/usr/bin/env python3
"""pty_progress.py — runs gpuedge with stderr on a pseudo-terminal of a set
width and checks what it drew there (tests/cli/progress.sh).

  pty_progress.py y4m FILE FRAMES
      writes a small YUV4MPEG2 clip (64x48, 10 fps) of FRAMES frames
  pty_progress.py run COLS RAW [--fifo PATH --frames N1[,N2]
                                [--resize COLS2 | --interrupt 1]] -- CMD...
      runs CMD with stderr on a pty COLS wide (stdin and stdout /dev/null),
      keeps every byte it drew in RAW and exits with CMD's status.  With
      --fifo, feeds PATH (a FIFO that CMD reads as a video) N1 frames (the
      second 0.35 s after the first, then 0.1 s apart); with --resize,
      waits until they are written, narrows the terminal to COLS2
      (TIOCSWINSZ and a SIGWINCH to CMD), waits, then feeds N2 more; RAW.mark
      holds how many bytes of RAW were drawn before the resize.  With
      --interrupt, a SIGINT then a SIGWINCH instead of the resize.
  pty_progress.py check COLS RAW [FROM]
      prints one line per problem in RAW (from byte FROM on): a redraw of
      the progress line wider than COLS - 1 columns once the escape
      sequences are removed; a line on the screen that is not one whole
      message (one glued to a progress line); a line left standing.
  pty_progress.py lines RAW [FROM]
      prints the redraws, escape sequences removed, one a line
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import unicodedata

ESC = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
W, H = 64, 48


def frame(i):
    y = bytes(((x * 4 + i * 8) & 0xFF) for x in range(W)) * H
    return b"FRAME\n" + y + bytes([128]) * (W * H // 2)


def header():
    return b"YUV4MPEG2 W%d H%d F10:1 Ip A1:1 C420jpeg\n" % (W, H)


def set_cols(fd, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))


def cols_of(text):
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def redraws(raw):
    """The progress redraws: what follows a \r up to the next \r, but for
    the messages (followed by a newline), escape sequences removed."""
    segs = raw.split(b"\r")
    out = []
    for k, seg in enumerate(segs):
        if not seg or seg.startswith(b"\n") or (k + 1 < len(segs) and segs[k + 1].startswith(b"\n")):
            continue
        text = ESC.sub(b"", seg).decode("utf-8", "replace")
        if text:
            out.append(text)
    return out


def screen(raw):
    """The lines a terminal shows (an unbounded width: the redraws are
    measured apart), and what stands on the last one."""
    lines, cur, col = [], [], 0
    text = raw.decode("utf-8", "replace")
    i = 0
    while i < len(text):
        m = re.match(r"\x1b\[([0-9;?]*)([A-Za-z])", text[i:])
        if m:
            if m.group(2) == "K":
                del cur[col:]
            i += m.end()
            continue
        ch = text[i]
        i += 1
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(cur))
            cur, col = [], 0
        else:
            del cur[col:col + 1]
            cur.insert(col, ch)
            col += 1
    return lines, "".join(cur)


def feed(proc, slave, opts, rawpath, got, lock):
    """Writes the clip into the FIFO: the first frame, 0.35 s, then a frame
    every 0.1 s; between the two groups of frames, the resize or the
    interruption."""
    n = [int(x) for x in opts["--frames"].split(",")] + [0]
    try:
        with open(opts["--fifo"], "wb", buffering=0) as f:
            f.write(header())
            for k in range(n[0]):
                f.write(frame(k))
                time.sleep(0.35 if k == 0 else 0.1)
            if "--resize" in opts or "--interrupt" in opts:
                time.sleep(0.7)  # those frames written: nothing to draw now
                if "--resize" in opts:
                    set_cols(slave, int(opts["--resize"]))
                    proc.send_signal(signal.SIGWINCH)
                else:
                    proc.send_signal(signal.SIGINT)
                    time.sleep(0.2)
                    set_cols(slave, 30)
                    proc.send_signal(signal.SIGWINCH)
                time.sleep(0.4)  # the signal thread took it
                with lock:
                    mark = len(got)
                with open(rawpath + ".mark", "w") as m:
                    m.write("%d\n" % mark)
            for k in range(n[1]):
                f.write(frame(n[0] + k))
                time.sleep(0.1)
    except BrokenPipeError:
        pass  # (interrupted: gpuedge closed it)


def run(argv):
    cols, rawpath = int(argv[0]), argv[1]
    opts, i = {}, 2
    while argv[i] != "--":
        opts[argv[i]] = argv[i + 1]
        i += 2
    cmd = argv[i + 1:]
    master, slave = pty.openpty()
    set_cols(slave, cols)
    got, lock = bytearray(), threading.Lock()
    devnull = os.open(os.devnull, os.O_RDWR)
    proc = subprocess.Popen(cmd, stdin=devnull, stdout=devnull, stderr=slave, close_fds=True)
    feeder = None
    if "--fifo" in opts:
        feeder = threading.Thread(target=feed, args=(proc, slave, opts, rawpath, got, lock),
                                  daemon=True)
        feeder.start()
    deadline = time.time() + 60
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            with lock:
                got.extend(data)
            continue
        if proc.poll() is not None:
            break
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        print("pty_progress: timed out", file=sys.stderr)
    if feeder:
        feeder.join(5)
    with open(rawpath, "wb") as f:
        f.write(got)
    return proc.returncode


def check(argv):
    cols, raw = int(argv[0]), open(argv[1], "rb").read()
    raw = raw[int(argv[2]):] if len(argv) > 2 else raw
    bad = 0
    for s in redraws(raw):
        if cols_of(s) > cols - 1:
            print("%d columns > %d: %r" % (cols_of(s), cols - 1, s))
            bad += 1
    lines, last = screen(raw)
    for s in lines:
        if s and (not s.startswith("gpuedge: ") or "gpuedge: " in s[1:]):
            print("not one whole message: %r" % s)
            bad += 1
    if last:
        print("left on the terminal: %r" % last)
        bad += 1
    return 1 if bad else 0


def main():
    what = sys.argv[1]
    if what == "y4m":
        with open(sys.argv[2], "wb") as f:
            f.write(header() + b"".join(frame(k) for k in range(int(sys.argv[3]))))
        return 0
    if what == "run":
        return run(sys.argv[2:])
    if what == "check":
        return check(sys.argv[2:])
    if what == "lines":
        raw = open(sys.argv[2], "rb").read()
        for s in redraws(raw[int(sys.argv[3]):] if len(sys.argv) > 3 else raw):
            print(s)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
