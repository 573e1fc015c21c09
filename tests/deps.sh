#!/bin/sh
# Installs the Debian packages named on the command line that are missing.
# Used by `make deps` (and so by `make test` and `make demo`).
missing=
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "gpuedge: installing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
$SUDO apt-get install -y -qq --no-install-recommends $missing || exit 1
