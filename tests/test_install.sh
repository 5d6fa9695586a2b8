#!/usr/bin/env bash
# test_install.sh -- Stepformer installed like a real program (issue 22):
#   1. `cmake --install` of this build into a temporary prefix puts the program, the lessons, the
#      models, the .desktop file, the icon, the AppStream metadata, the man page and the bash
#      completion where a desktop and `man` look for them;
#   2. the .desktop file (desktop-file-validate), the metadata (appstreamcli validate) and the man
#      page (man --warnings, as lintian runs it) are valid;
#   3. the man page and the bash completion cannot fall behind --help: every option of every
#      command's --help is in both;
#   4. the installed program runs with the source and build trees out of reach (a private mount
#      namespace hides both when this runs as root): `export` writes the cat/bank pictures with the
#      trained model, `check` passes every installed lesson, decoder.md finds its model;
#   5. the search order: STEPFORMER_DATA wins, a missing folder is skipped, a teacher's lesson in
#      XDG_DATA_HOME is listed and opens by name, a lesson or model found nowhere says where it
#      looked in one line; --version names the version and the commit.
# The tools are Debian packages (scripts/setup.sh's SF_PKGS_TEST; scripts/test installs them): when
# one is missing the test fails and says which package to install, it is never skipped.
set -u
SF=${STEPFORMER:?set STEPFORMER to the built binary}
SRC=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the source tree}
BUILD=$(cd "$(dirname "$SF")" && pwd)
fail=0
ok() { echo "ok: $*"; }
bad() {
  echo "FAILED: $*"
  fail=1
}

for tool in desktop-file-validate:desktop-file-utils appstreamcli:appstream man:man-db xmllint:libxml2-utils; do
  command -v "${tool%%:*}" >/dev/null ||
    bad "${tool%%:*} is missing: apt-get install ${tool#*:} (scripts/test installs it)"
done
[ "$fail" = 0 ] || exit 1

T=$(mktemp -d /tmp/stepformer-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
if ! cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
  cat "$T/install.log"
  bad "cmake --install failed"
  exit 1
fi

# 1. the files, where they belong
for f in bin/stepformer share/stepformer/lessons/cat-bank.md share/stepformer/lessons/decoder.md \
  share/stepformer/lessons/README.md share/stepformer/models/bank.safetensors \
  share/stepformer/models/translate.safetensors share/stepformer/models/add.safetensors \
  share/applications/io.github.stepformer.Stepformer.desktop share/icons/hicolor/scalable/apps/stepformer.svg \
  share/metainfo/io.github.stepformer.Stepformer.metainfo.xml share/man/man1/stepformer.1 \
  share/bash-completion/completions/stepformer; do
  [ -s "$P/$f" ] || bad "cmake --install did not install $f"
done
for d in "$SRC"/lessons/*.md; do
  [ -f "$P/share/stepformer/lessons/$(basename "$d")" ] || bad "lesson $(basename "$d") is not installed"
done
[ -x "$P/bin/stepformer" ] || bad "bin/stepformer is not executable"
[ "$fail" = 0 ] && ok "cmake --install: program, lessons, models, desktop file, icon, metadata, man page, completion"

# 2. valid for the tools a desktop and Debian use
out=$(desktop-file-validate "$P/share/applications/io.github.stepformer.Stepformer.desktop" 2>&1) &&
  [ -z "$out" ] && ok "desktop-file-validate" || bad "desktop-file-validate: $out"
grep -q '^Exec=stepformer' "$P/share/applications/io.github.stepformer.Stepformer.desktop" &&
  grep -q '^Icon=stepformer$' "$P/share/applications/io.github.stepformer.Stepformer.desktop" ||
  bad "the .desktop file does not run stepformer with the stepformer icon"
out=$(appstreamcli validate --no-net "$P/share/metainfo/io.github.stepformer.Stepformer.metainfo.xml" 2>&1) &&
  ok "appstreamcli validate" || bad "appstreamcli validate: $out"
xmllint --noout "$P/share/icons/hicolor/scalable/apps/stepformer.svg" && ok "the icon is well-formed SVG" ||
  bad "the icon is not well-formed XML"
out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$P/share/man/man1/stepformer.1" 2>&1 >/dev/null)
[ -z "$out" ] && ok "man renders stepformer.1 without a warning" || bad "man --warnings: $out"
MANWIDTH=200 man -l "$P/share/man/man1/stepformer.1" 2>/dev/null | sed 's/.\x08//g' >"$T/man.txt"
grep -q "EXAMPLES" "$T/man.txt" && grep -q "KEYS" "$T/man.txt" && grep -q "FILES" "$T/man.txt" ||
  bad "the man page lacks EXAMPLES, KEYS or FILES"

# 3. every option of every --help is in the man page and in the completion. The completion is run
# as bash runs it: COMP_WORDS = stepformer [COMMAND] --, and its answers are the options offered.
. "$P/share/bash-completion/completions/stepformer"
compopt() { :; } # only meaningful inside a real completion
missing_man="" missing_comp=""
for cmd in window export dump stages info check bench; do
  if [ "$cmd" = window ]; then help=$("$SF" --text x --help); else help=$("$SF" "$cmd" --help); fi
  [ "$cmd" = window ] || grep -qw -- "$cmd" "$T/man.txt" || missing_man="$missing_man $cmd"
  if [ "$cmd" = window ]; then COMP_WORDS=(stepformer --); else COMP_WORDS=(stepformer "$cmd" --); fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _stepformer
  offered=" ${COMPREPLY[*]} "
  for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$help" | sort -u); do
    [ "$opt" = --help ] && continue
    grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" "$T/man.txt" || missing_man="$missing_man $cmd:$opt"
    [[ $offered == *" $opt "* ]] || missing_comp="$missing_comp $cmd:$opt"
  done
done
for cmd in $("$SF" --help | awk '/^  [a-z]+ /{print $1}'); do
  grep -q "^   *$cmd: " "$T/man.txt" || missing_man="$missing_man (no section for the command $cmd)"
done
[ -z "$missing_man" ] && ok "the man page has every command and every option of every --help" ||
  bad "the man page lacks:$missing_man (packaging/stepformer.1)"
[ -z "$missing_comp" ] && ok "the bash completion offers every option of every --help" ||
  bad "the bash completion lacks:$missing_comp (packaging/stepformer.bash-completion)"

# 4. and 5. the installed program, with the source tree and the build tree out of reach. Every run
# starts from a clean environment: no STEPFORMER_DATA, no XDG folder that could hold a real install.
cp "$SRC/tests/lsan.supp" "$T/lsan.supp"
mkdir -p "$T/home" "$T/work" "$T/xdg/stepformer/lessons" "$T/alt/models"
sed 's/^title: .*/title: My own lesson/' "$SRC/lessons/decoder.md" >"$T/xdg/stepformer/lessons/my-lesson.md"
"$SF" dump --random D=16,H=2,F=32,layers=1,seed=5 --text "The cat walks by the bank" --out "$T/alt/dump" >/dev/null &&
  cp "$T/alt/dump/model.safetensors" "$T/alt/models/bank.safetensors" || bad "dump of a random model failed"
cat >"$T/run.sh" <<'EOF'
# run.sh -- runs inside the namespace (or as it is): the installed program only.
set -u
T=$1 P=$2 SF=$P/bin/stepformer fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fail=1; }
cd "$T/work"
clean() { env -u STEPFORMER_DATA -u SF_SOURCE_DIR -u SF_TEST_DIR HOME="$T/home" XDG_DATA_HOME="$T/home/none" \
  XDG_DATA_DIRS=/nonexistent LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0" "$@"; }

v=$(clean "$SF" --version)
[[ $v =~ ^stepformer\ [0-9]+\.[0-9]+.*\(commit\ [^\ ]+\)$ ]] && ok "--version: $v" || bad "--version: \"$v\""

clean "$SF" info --paths >paths.txt 2>&1
grep -q "next to the program  $P/share/stepformer: 7 lessons, 5 models\|next to the program  $P/share/stepformer: [0-9]* lessons, [0-9]* models" paths.txt &&
  grep -q "bank.safetensors  *$P/share/stepformer/models/bank.safetensors  (the default)" paths.txt &&
  ok "info --paths finds the installed data next to the program" || { bad "info --paths:"; cat paths.txt; }

# export in any folder: the cat/bank pictures with the trained model, no note about a stand-in
clean "$SF" export --out pics --size 640x360 >export.log 2>&1 || { bad "export failed:"; cat export.log; }
n=$(ls pics/*.png 2>/dev/null | wc -l)
[ "$n" -ge 16 ] && ! grep -q "random" export.log && grep -aq "bank.safetensors" pics/08-softmax-h1.png &&
  ok "export from the installed tree: $n pictures of the trained model" || { bad "export wrote $n pictures:"; cat export.log; }
grep -aq "Stepformer [0-9.]* (commit" pics/08-softmax-h1.png && ok "a picture names the version (PNG Software)" ||
  bad "the PNG has no version"
clean "$SF" dump --out dump >/dev/null 2>&1 && grep -aq '"written_by":"stepformer [0-9.]* (commit' dump/model.safetensors &&
  ok "a dump's model names the version" || bad "the dump's model.safetensors has no written_by"
clean "$SF" check "$P"/share/stepformer/lessons/*.md >check.log 2>&1 && ok "check passes every installed lesson" ||
  { bad "check of the installed lessons:"; cat check.log; }
clean "$SF" export --lesson decoder.md --out dec --size 640x360 --format png >dec.log 2>&1 &&
  grep -aq "translate.safetensors" "$(ls dec/*.png | head -1)" && ok "decoder.md by name, its model from the installed models" ||
  { bad "export --lesson decoder.md:"; cat dec.log; }

# the order: STEPFORMER_DATA wins over the installed data (its bank.safetensors is a D=16 model)
clean env STEPFORMER_DATA="$T/alt" "$SF" dump --out alt >/dev/null 2>&1 &&
  clean "$SF" info --model alt/model.safetensors | grep -q "^D  *16 " &&
  ok "STEPFORMER_DATA wins: its bank.safetensors is the one opened" || bad "STEPFORMER_DATA did not win"
# a missing folder is skipped: the installed data is found after it
clean env STEPFORMER_DATA="$T/nothere" "$SF" info --paths >miss.txt 2>&1
grep -q "STEPFORMER_DATA *$T/nothere: missing" miss.txt &&
  grep -q "$P/share/stepformer/models/bank.safetensors  (the default)" miss.txt &&
  ok "a missing STEPFORMER_DATA is skipped" || { bad "a missing folder:"; cat miss.txt; }
# a teacher's lesson, listed beside the shipped ones, opened by name
clean env XDG_DATA_HOME="$T/xdg" "$SF" info --paths >mine.txt 2>&1
grep -q "my-lesson.md  *$T/xdg/stepformer/lessons/my-lesson.md  (yours)" mine.txt &&
  grep -q "cat-bank.md  *$P/share/stepformer/lessons/cat-bank.md" mine.txt &&
  ok "the teacher's lesson is listed beside the shipped ones" || { bad "the teacher's lesson:"; cat mine.txt; }
clean env XDG_DATA_HOME="$T/xdg" "$SF" check my-lesson.md >mine.log 2>&1 && grep -q "my-lesson.md: ok" mine.log &&
  ok "check my-lesson.md opens the teacher's lesson by name (a copy of decoder.md: its model from the shipped ones)" || { bad "check my-lesson.md:"; cat mine.log; }

# found nowhere: one line that says where it looked
mkdir -p bare/bin && cp "$SF" bare/bin/stepformer
clean bare/bin/stepformer export --lesson nothere.md --out x >nf.out 2>nf.err
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <nf.err)" = 1 ] && grep -q "nothere.md: no such lesson here.*looked in $T/home/none/stepformer/lessons (missing), .STEPFORMER_DATA (not set)" nf.err &&
  ok "a lesson found nowhere: one line, where it looked" || { bad "a missing lesson (exit $rc):"; cat nf.err; }
clean bare/bin/stepformer stages >nm.out 2>nm.err
[ "$(wc -l <nm.err)" = 1 ] && grep -q "bank.safetensors is not installed (looked in .*$T/work/bare/share/stepformer (missing)" nm.err &&
  ok "the shipped model found nowhere: one line, where it looked, and a stand-in" || { bad "a missing model:"; cat nm.err; }
exit $fail
EOF
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  # a private mount namespace: an empty folder over the source tree and over the build tree
  # (the build tree first: it may be inside the source tree)
  if unshare -m --propagation private bash -c 'mount -t tmpfs none "$2" && mount -t tmpfs none "$1" &&
    [ ! -e "$1/lessons" ] && bash "$3/run.sh" "$3" "$4"' _ "$SRC" "$BUILD" "$T" "$P"; then
    ok "(all of it with $SRC and $BUILD hidden)"
  else
    fail=1
  fi
else
  echo "note: not root: the source tree stays visible, so this checks that the installed program does"
  echo "      not search it (it runs outside its build folder): info --paths must say so"
  bash "$T/run.sh" "$T" "$P" || fail=1
  "$P/bin/stepformer" info --paths | grep -q "the source tree .*not searched" || bad "the installed program searches the source tree"
fi
[ "$fail" = 0 ] && echo "test_install: all passed" || echo "test_install: FAILED"
exit "$fail"
