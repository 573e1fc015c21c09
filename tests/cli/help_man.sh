#!/bin/sh
# --help and man/gpuedge.1 stay in step: every long option in one appears in
# the other, with the same default.  From --help: every "--name" word; from the mdoc source: every
# "Fl Fl name" (and "Fl -name") macro.  --help is printed from the option
# table (src/cli/options.c; tests/unit/test_cli.c checks that every row is
# in it), so this checks the table against the man page (an entry of its own
# for each option), docs/cli.md and the Python binding's keyword names.
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

# verdict RC FILE OK BAD: a Python check below passed when it exited 0 and
# its last line says it checked something (OK's %s: that line).
verdict() {
    if [ "$1" -eq 0 ] && grep -q '^checked [1-9]' "$2"; then
        # shellcheck disable=SC2059
        ok "$(printf "$3" "$(tail -n 1 "$2")")"
    else
        not_ok "$4: $(head -n 3 "$2" | tr '\n' ' ')"
    fi
}

# Defaults agree: every "[DEFAULT]" --help states for an option is stated by
# the man page's entry for it, in a sentence that says "default"; every
# "Default V." of a man entry is the default --help states; docs/cli.md
# names every option and its defaults agree too.  (Python parses
# both: the mdoc entry from ".It Fl Fl NAME" to the next ".It" at its level.)
PY=
for p in /usr/bin/python3 python3; do
    command -v "$p" >/dev/null 2>&1 && { PY=$p; break; }
done
if [ -z "$PY" ]; then
    skip "defaults in --help and the man page: no python3"
else
    "$GPUEDGE" --help >"$T/help.txt" 2>/dev/null
    "$PY" - "$T/help.txt" "$MAN" "$ROOT/docs/cli.md" >"$T/defaults" 2>&1 <<'PYEOF'
import re, sys
help_text = open(sys.argv[1]).read().split("\n")
man = open(sys.argv[2]).read().split("\n")

# --help: an option line starts with spaces and "-x, --name" or "--name"; its
# text runs until the next option line or a blank line.
opts, cur = {}, None
for line in help_text:
    m = re.match(r"\s+(?:-\w, )?--([a-z][a-z0-9-]*)", line)
    if m:
        cur = m.group(1)
        opts.setdefault(cur, "")
        opts[cur] += line + " "
    elif cur and line.startswith("                          "):
        opts[cur] += line + " "
    else:
        cur = None
helpdef = {}
for name, text in opts.items():
    m = re.search(r"\[([^\]=][^\]]*)\]", text)  # not "[=N]": an optional argument
    if m:
        helpdef[name] = m.group(1).strip()

# the man page: entries of ".It Fl Fl NAME" (also ".It Fl x , Fl Fl NAME" and
# ".It Fl x Ar arg , Fl Fl NAME"),
# their text with mdoc macros dropped, up to the next .It of the same list.
entries, cur, depth = {}, None, 0
for line in man:
    if line.startswith(".Bl"):
        depth += 1
    if line.startswith(".El"):
        depth -= 1
        if depth < 1:
            cur = None
    m = re.match(r"\.It Fl (?:\w (?:Ar \w+ )?, Fl )?Fl ([a-z][a-z0-9-]*)", line)
    if m and depth == 1:
        cur = m.group(1)
        entries[cur] = ""
        continue
    if line.startswith(".It") and depth == 1:
        cur = None
    if cur:
        if line.startswith("."):
            words = [w for w in line[1:].split()[1:] if w not in
                     ("Cm", "Ar", "Fl", "Ns", "No", "Pq", "Po", "Pc", "Ql", "Va", "Ev", "Sx", "Xr", "Op")]
            line = " ".join(words)
        entries[cur] += line + " "

def sentences(text):
    return [s for s in re.split(r"(?<=[.;:])\s+", text) if s]

def words(s):
    return {w.strip(".,;:()[]") for w in s.split()}

bad = 0
stop = {"for", "images", "videos", "default", "the", "and"}
for name, d in sorted(helpdef.items()):
    entry = entries.get(name)
    if entry is None:
        print("--%s: --help says [%s]; no man entry" % (name, d)); bad += 1; continue
    need = [w.strip(",") for w in d.split() if w.strip(",") not in stop] or ["default"]
    ok = any("default" in s.lower() and all(w in words(s) for w in need)
             for s in sentences(entry)) or ("[%s]" % d) in entry
    if not ok:
        print("--%s: --help says [%s]; man page: %s" % (name, d, entry.strip()[:160])); bad += 1
for name, entry in sorted(entries.items()):
    for m in re.finditer(r"\bDefault ([^\s]+?)\.?(?:\s|$)", entry):
        v = m.group(1)
        if helpdef.get(name) != v:
            print("--%s: man page says Default %s; --help says [%s]" % (name, v, helpdef.get(name)))
            bad += 1
# docs/cli.md's tables: a row for one option with a default column must
# agree with --help's (numbers compared as numbers), and every long option
# --help lists is named on the page.
def same(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b
page = open(sys.argv[3]).read()
for name in sorted(opts):
    if "--" + name not in page:
        print("--%s: not in docs/cli.md" % name); bad += 1
    if name not in entries:
        print("--%s: no entry of its own in the man page's option lists" % name); bad += 1
for row in page.split("\n"):
    cells = [c.strip() for c in row.strip().strip("|").split("|")] if row.startswith("| `-") else []
    if len(cells) < 3:
        continue
    names = re.findall(r"--([a-z][a-z0-9-]*)", cells[0])
    d = re.sub(r"\(.*?\)", "", cells[1]).strip()
    if len(names) != 1 or not d or d == "off" or names[0] not in helpdef:
        continue
    hw = words(helpdef[names[0]])
    for w in re.split(r"[\s/,]+", d):
        if w and not any(same(w, h) for h in hw):
            print("--%s: docs/cli.md says %s; --help says [%s]" % (names[0], cells[1], helpdef[names[0]]))
            bad += 1
print("checked %d help defaults" % len(helpdef))
sys.exit(1 if bad else 0)
PYEOF
    verdict $? "$T/defaults" "defaults: %s, each the man page's and docs/cli.md's" \
        "defaults differ between --help, the man page and docs/cli.md"
fi

# The Python binding's keyword names are the CLI's: the canonical names of
# _BORDERS and _BACKENDS (the first name a value has) are the keywords
# --help lists for --border and --backend, each value is the public
# header's GE_BORDER_<NAME> / GE_BACKEND_<NAME> (ge_modes.h, gpuedge.h), every alias the binding
# takes the CLI takes too, and _CANNY_ON/_CANNY_AUTO are GE_CANNY_ON/AUTO
# (--help offers "--canny auto").  Read from the source: nothing imported.
if [ -z "$PY" ]; then
    skip "Python binding's names: no python3"
else
    "$PY" - "$T/help.txt" "$ROOT/python/gpuedge/__init__.py" "$ROOT/include/gpuedge.h" \
        "$ROOT/src/base/ge_modes.h" \
        "$GPUEDGE" >"$T/pynames" 2>&1 <<'PYEOF'
import ast, re, subprocess, sys
# the public header and the one it includes for enum ge_border/ge_canny
help_text, py_src, prog = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[5]
header = open(sys.argv[3]).read() + open(sys.argv[4]).read()
want = {"_BORDERS", "_BACKENDS", "_CANNY_ON", "_CANNY_AUTO"}
consts = {}
for node in ast.parse(py_src).body:
    for t in node.targets if isinstance(node, ast.Assign) else []:
        if isinstance(t, ast.Name) and t.id in want:
            consts[t.id] = ast.literal_eval(node.value)
        elif isinstance(t, ast.Tuple) and {getattr(n, "id", "") for n in t.elts} & want:
            for n, v in zip(t.elts, ast.literal_eval(node.value)):
                consts[n.id] = v
enums = {m.group(1): int(m.group(2))
         for m in re.finditer(r"\b(GE_[A-Z0-9_]+)\s*=\s*(\d+)", header)}
bad, checked = 0, 0
for opt, var, prefix in (("border", "_BORDERS", "GE_BORDER_"), ("backend", "_BACKENDS", "GE_BACKEND_")):
    m = re.search(r"^\s+--%s [A-Z]+\s+(.*?)\s*\[" % opt, help_text, re.M)
    d = consts.get(var)
    if not m or not isinstance(d, dict):
        print("--%s: no keyword list in --help, or no %s in the binding" % (opt, var)); bad += 1
        continue
    cli = set(re.split(r",\s*|\s+or\s+", m.group(1)))
    canon = {}
    for k, v in d.items():
        canon.setdefault(v, k)
    if set(canon.values()) != cli:
        print("--%s: --help lists %s, %s's names are %s" % (opt, sorted(cli), var, sorted(canon.values())))
        bad += 1
    for v, k in canon.items():
        if enums.get(prefix + k.upper()) != v:
            print("%s[%r] = %d, gpuedge.h's %s%s = %s" % (var, k, v, prefix, k.upper(),
                                                           enums.get(prefix + k.upper())))
            bad += 1
    for k in d:
        r = subprocess.run([prog, "--%s=%s" % (opt, k), "--help"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if r.returncode != 0:
            print("--%s: the binding takes %r, the CLI refuses it: %s" % (opt, k, r.stderr.decode().strip()))
            bad += 1
        checked += 1
for name in ("ON", "AUTO"):
    if consts.get("_CANNY_" + name) != enums.get("GE_CANNY_" + name):
        print("_CANNY_%s = %s, gpuedge.h's GE_CANNY_%s = %s" % (name, consts.get("_CANNY_" + name),
                                                               name, enums.get("GE_CANNY_" + name)))
        bad += 1
if not re.search(r"^\s+--canny auto\s", help_text, re.M):
    print("--help has no '--canny auto' entry (the binding's canny='auto')"); bad += 1
print("checked %d binding keywords" % checked)
sys.exit(1 if bad else 0)
PYEOF
    verdict $? "$T/pynames" "Python binding: %s, the CLI's names and gpuedge.h's values" \
        "Python binding's names differ from the CLI's or gpuedge.h's"
fi

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
