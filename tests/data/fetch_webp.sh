#!/bin/sh
# fetch_webp.sh — real WebP photos for the format tests, from Debian's
# gnome-backgrounds package (lossy WebP wallpapers, 256x256 and 4096x4096).
#
#   tests/data/fetch_webp.sh [DIR]     (default build/data/webp)
#
# `apt-get download` fetches the .deb into DIR/cache (kept: a second run
# downloads nothing), `dpkg-deb -x` unpacks it, and the WebP files land in
# DIR.  Prints the directory on success; exits 1 (with a reason on stderr)
# when the package cannot be had (no network, no apt): the tests then say
# "skip", never "ok".  Nothing is committed: the photos stay under build/.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
out=${1:-$root/build/data/webp}
pkg=gnome-backgrounds
mkdir -p "$out/cache" || exit 1
out=$(cd "$out" && pwd)

deb=$(ls "$out/cache/${pkg}"_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
    command -v apt-get >/dev/null 2>&1 || { echo "fetch_webp: no apt-get" >&2; exit 1; }
    # apt-get download writes to the current directory
    (cd "$out/cache" && apt-get download -q "$pkg" >download.log 2>&1) || {
        echo "fetch_webp: apt-get download $pkg failed: $(tail -n 1 "$out/cache/download.log")" >&2
        rm -f "$out/cache/${pkg}"_*.deb
        exit 1
    }
    deb=$(ls "$out/cache/${pkg}"_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || { echo "fetch_webp: no .deb after apt-get download" >&2; exit 1; }
fi
if ! ls "$out"/*.webp >/dev/null 2>&1; then
    tmp=$(mktemp -d "$out/cache/x.XXXXXX") || exit 1
    if ! dpkg-deb -x "$deb" "$tmp"; then
        rm -rf "$tmp"
        echo "fetch_webp: dpkg-deb -x $deb failed" >&2
        exit 1
    fi
    find "$tmp" -name '*.webp' -exec mv {} "$out/" \;
    rm -rf "$tmp"
fi
ls "$out"/*.webp >/dev/null 2>&1 || { echo "fetch_webp: $pkg has no .webp files" >&2; exit 1; }
echo "$out"
