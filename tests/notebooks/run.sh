#!/usr/bin/env bash
# tests/notebooks/run.sh -- executes every notebook of tests/notebooks/ (and lessons/notebook.ipynb, to
# HTML) with `jupyter nbconvert --execute`, importing the package from python/ and the library from
# build/ (or $STEPFORMER_LIB): each notebook asserts that stepformer.stages equals its module's own
# forward (hooks); here we check that stepformer.show left PNG pictures in its outputs (and in the
# HTML). Needs jupyter-nbconvert, python3-ipykernel, python3-numpy and python3-torch (scripts/test
# installs them). Usage: tests/notebooks/run.sh [BUILD_DIR]   Exit 0 when all pass.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
export PATH=/usr/bin:$PATH # the kernel is Debian's python3 (numpy, torch), whatever else is first on PATH
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export STEPFORMER_LIB=${STEPFORMER_LIB:-$build/libstepformer.so}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
for need in jupyter-nbconvert python3-ipykernel python3-numpy python3-torch; do
  dpkg-query -W -f='${Status}\n' "$need" 2>/dev/null | grep -q "install ok installed" ||
    { echo "notebooks: $need is not installed (apt-get install $need)"; exit 2; }
done
[ -f "$STEPFORMER_LIB" ] || { echo "notebooks: $STEPFORMER_LIB is missing: build first"; exit 2; }
out=$(mktemp -d)
fail=0
# count_png FILE.ipynb: the PNG outputs of an executed notebook
count_png() {
  python3 -c 'import json,sys; nb=json.load(open(sys.argv[1]))
print(sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", [])))' "$1"
}
for nb in "$root"/tests/notebooks/*.ipynb; do
  name=$(basename "$nb" .ipynb)
  if ! jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 --output-dir "$out" \
      "$nb" >"$out/$name.log" 2>&1; then
    echo "$name: FAILED"; tail -25 "$out/$name.log"; fail=1; continue
  fi
  pngs=$(count_png "$out/$name.ipynb")
  checked=$(python3 -c 'import json,sys; nb=json.load(open(sys.argv[1]))
print(sum("equal the module" in "".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", [])))' "$out/$name.ipynb")
  if [ "$pngs" -ge 1 ] && [ "$checked" -ge 1 ]; then
    echo "$name: $pngs pictures, stages equal the module's forward ($checked checks)"
  else
    echo "$name: FAILED: $pngs pictures, $checked passed checks of the stages"; fail=1
  fi
done
lesson=$root/lessons/notebook.ipynb
if [ -f "$lesson" ]; then
  if jupyter nbconvert --to html --execute --output-dir "$out" "$lesson" >"$out/lesson.log" 2>&1 &&
      imgs=$(grep -c 'src="data:image/png;base64' "$out/notebook.html") && [ "$imgs" -ge 1 ]; then
    echo "lessons/notebook.ipynb: HTML with $imgs pictures"
  else
    echo "lessons/notebook.ipynb: FAILED (no pictures in the HTML)"; tail -25 "$out/lesson.log"; fail=1
  fi
fi
[ "$fail" = 0 ] && rm -rf "$out"
exit "$fail"
