#!/bin/sh
# --help and man/gpuedge.1 stay in step: every long option in one appears in
# the other.  From --help: every "--name" word; from the mdoc source: every
# "Fl Fl name" (and "Fl -name") macro.
. "$(dirname "$0")/lib.sh"

MAN=$ROOT/man/gpuedge.1
ge --help
if [ "$RC" -ne 0 ] || [ ! -s "$OUT" ]; then
    not_ok "--help: exit $RC, no text"
    finish
fi
grep -o -- '--[a-z][a-z0-9-]*' "$OUT" | LC_ALL=C sort -u >"$T/help.opts"
grep -o -e 'Fl Fl [a-z][a-z0-9-]*' -e 'Fl -[a-z][a-z0-9-]*' "$MAN" |
    sed -e 's/^Fl Fl /--/' -e 's/^Fl -/--/' | LC_ALL=C sort -u >"$T/man.opts"

n=$(nlines "$T/help.opts")
[ "$n" -ge 20 ] && ok "--help lists $n long options" ||
    not_ok "--help lists only $n long options (parse failed?)"
n=$(nlines "$T/man.opts")
[ "$n" -ge 20 ] && ok "man page names $n long options" ||
    not_ok "man page names only $n long options (parse failed?)"

only_help=$(LC_ALL=C comm -23 "$T/help.opts" "$T/man.opts" | tr '\n' ' ')
only_man=$(LC_ALL=C comm -13 "$T/help.opts" "$T/man.opts" | tr '\n' ' ')
[ -z "$only_help" ] && ok "every long option in --help is in the man page" ||
    not_ok "in --help but not in man/gpuedge.1: $only_help"
[ -z "$only_man" ] && ok "every long option in the man page is in --help" ||
    not_ok "in man/gpuedge.1 but not in --help: $only_man"

# Every documented option is one the parser knows: "--name --help" is never
# "unknown option" (options that need an argument get one).
unknown=
while IFS= read -r opt; do
    "$GPUEDGE" "$opt=1" --help >/dev/null 2>"$T/opt.err" ||
        "$GPUEDGE" "$opt" --help >/dev/null 2>>"$T/opt.err"
    if grep -q "unknown option '$opt" "$T/opt.err"; then
        unknown="$unknown $opt"
    fi
done <"$T/help.opts"
[ -z "$unknown" ] && ok "the parser accepts every long option --help lists" ||
    not_ok "listed in --help but unknown to the parser:$unknown"

# The exit statuses the man page documents are those of DESIGN.md §3.
missing=
for s in 0 1 2 3 130 143; do
    sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$MAN" | grep -qx "\.It $s" || missing="$missing $s"
done
[ -z "$missing" ] && ok "man page EXIT STATUS lists 0 1 2 3 130 143" ||
    not_ok "man page EXIT STATUS lacks:$missing"

if command -v mandoc >/dev/null 2>&1; then
    mandoc -T lint -W warning "$MAN" >"$T/lint" 2>&1
    [ ! -s "$T/lint" ] && ok "mandoc -T lint: no warnings" ||
        not_ok "mandoc -T lint: $(head -n 3 "$T/lint" | tr '\n' ' ')"
else
    skip "mandoc lint: mandoc not installed"
fi

finish
