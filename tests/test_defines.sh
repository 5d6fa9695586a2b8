#!/usr/bin/env bash
# test_defines.sh -- every `#include "x.h" // defines: a, b` note names what x.h really declares.
#
# STYLE.md asks for the note as a reader's guide; a note that drifted (a renamed function) misleads.
# For each note in src/ and tests/, each name in it (identifiers only: "mat_*" is skipped) must
# appear as a word in the header outside its // comments. The case below shows the check fails.
#
#   SF_SOURCE_DIR=. bash tests/test_defines.sh
set -u
ROOT=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the source tree}
failures=0 notes=0

# check_note FILE:LINE HEADER NAMES: prints a line and returns 1 for each name HEADER lacks
check_note() {
  local where=$1 header=$2 names=$3 path name bad=0
  path=$(find "$ROOT/src" "$ROOT/tests" -maxdepth 2 -name "$header" -print -quit)
  if [ -z "$path" ]; then
    echo "FAILED: $where: $header not found"
    return 1
  fi
  for name in ${names//,/ }; do
    [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
    if ! sed 's://.*$::' "$path" | grep -qw -- "$name"; then
      echo "FAILED: $where: $header does not declare $name"
      bad=1
    fi
  done
  return $bad
}

while IFS= read -r hit; do
  where=${hit%%:#include*}
  line=${hit#"$where":}
  header=$(sed -E 's/^#include "([^"]+)".*/\1/' <<<"$line")
  names=$(sed -E 's/.*\/\/ *defines: *//' <<<"$line")
  notes=$((notes + 1))
  check_note "${where#"$ROOT"/}" "$header" "$names" || failures=$((failures + 1))
done < <(grep -rn --include='*.c' --include='*.h' -E '^#include "[^"]+" *// *defines:' "$ROOT/src" "$ROOT/tests")

# the check itself: a name no header declares is caught
if check_note "self-test" "err.h" "Err, err_no_such_function" >/dev/null; then
  echo "FAILED: self-test: a note naming err_no_such_function passed"
  failures=$((failures + 1))
fi

echo "test_defines: $notes notes, $failures failures"
[ "$notes" -gt 100 ] || { echo "FAILED: only $notes notes found: is SF_SOURCE_DIR right?"; exit 1; }
[ "$failures" = 0 ]
