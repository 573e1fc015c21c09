#!/bin/sh
# make install / make uninstall with PREFIX, DESTDIR and MANPREFIX: the
# binary and the man page land where asked, run from there, and go again.
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
    skip "install: the sanitizer build is not installed"
    finish
fi
if ! command -v make >/dev/null 2>&1; then
    skip "install: no make"
    finish
fi
D=$T/dest
# SMS as the check target was built with, so make finds gpuedge up to date
make -s -C "$ROOT" ${SMS:+SMS="$SMS"} install DESTDIR="$D" PREFIX=/opt/ge \
    MANPREFIX=/opt/ge/man >"$T/make.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -x "$D/opt/ge/bin/gpuedge" ] && [ -f "$D/opt/ge/man/man1/gpuedge.1" ]; then
    ok "make install DESTDIR PREFIX MANPREFIX: bin/gpuedge and man1/gpuedge.1"
else
    not_ok "make install: exit $rc"
    sed -n '1,5s/^/#   /p' "$T/make.log"
fi
if "$D/opt/ge/bin/gpuedge" --version >/dev/null 2>&1; then
    ok "installed gpuedge runs"
else
    not_ok "installed gpuedge does not run"
fi
mode=$(stat -c %a "$D/opt/ge/bin/gpuedge" 2>/dev/null)
[ "$mode" = 755 ] && ok "installed binary mode 755" || not_ok "installed binary mode $mode"
make -s -C "$ROOT" ${SMS:+SMS="$SMS"} uninstall DESTDIR="$D" PREFIX=/opt/ge \
    MANPREFIX=/opt/ge/man >"$T/make.log" 2>&1
if [ ! -e "$D/opt/ge/bin/gpuedge" ] && [ ! -e "$D/opt/ge/man/man1/gpuedge.1" ]; then
    ok "make uninstall removes both"
else
    not_ok "make uninstall left files behind"
fi
finish
