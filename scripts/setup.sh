# scripts/setup.sh -- sourced by scripts/run and scripts/test: makes sure the Debian packages
# Stepformer needs are installed, then configures and builds into build/.
#   sf_setup run|test    installs what is missing (apt-get as root, else sudo; otherwise prints
#                        the exact apt-get line and stops), then builds.
SF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Needed to build and run: compiler, CMake, the libraries, and the fonts the pictures use: DejaVu
# (Latin, Greek, Cyrillic: lessons in French, German, Greek, Russian), Latin Modern (the notation),
# and Droid Sans Fallback, the font fontconfig falls back to for Chinese, Japanese and Korean
# (render/text.c; tests/test_glyphs.c checks that no character of a lesson is a missing-glyph box).
SF_PKGS_RUN="gcc libc6-dev make cmake pkg-config libopenblas-dev libcjson-dev libutf8proc-dev libmd4c-dev
  libsdl2-dev libsdl2-ttf-dev libpng-dev zlib1g-dev libfontconfig-dev fontconfig fonts-dejavu-core fonts-lmodern
  fonts-droid-fallback"
# Also needed by the tests: clang and its runtime for libFuzzer, a virtual X display for the
# window tests, xmllint to check that SVG files are XML, clang-format for the style check, and
# for the install test (tests/test_install.sh) the checkers of the .desktop file, the AppStream
# metadata and the man page.
SF_PKGS_TEST="clang libclang-rt-14-dev xvfb xauth xdotool libxml2-utils clang-format
  desktop-file-utils appstream man-db"
# The notebooks' test (tests/notebooks/run.sh, issue 37): Jupyter's nbconvert and kernel, numpy, and
# torch (the notebooks train the course's torch modules; python3-torch is large, about 230 MB
# installed with libtorch); python3-setuptools and python3-wheel for `pip install ./python`.
SF_PKGS_NOTEBOOK="jupyter-nbconvert python3-ipykernel python3-numpy python3-torch python3-setuptools python3-wheel"
# Needed by scripts/package to make and check the .deb: dpkg-shlibdeps (dpkg-dev), lintian.
SF_PKGS_PACKAGE="dpkg-dev lintian"
# The web build (scripts/web, scripts/test-web): Debian's emscripten and Node, dpkg-source for the
# Debian source packages it builds for wasm, the fonts it puts in the page (fonts-dejavu-core and
# fonts-lmodern above; fonts-dejavu-extra for DejaVu Sans Oblique, the page's italic), and
# headless Chromium with python3-websocket for the browser test.
SF_PKGS_WEB="emscripten nodejs dpkg-dev cmake make fonts-dejavu-core fonts-dejavu-extra fonts-lmodern"
SF_PKGS_WEB_TEST="chromium python3-websocket"

sf_missing() {
  local p missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  echo "$missing"
}

sf_install() {
  local missing
  missing=$(sf_missing "$@")
  [ -z "$missing" ] && return 0
  echo "stepformer: installing Debian packages:$missing"
  local apt="env DEBIAN_FRONTEND=noninteractive apt-get"
  if [ "$(id -u)" = 0 ]; then
    $apt update -q >/dev/null && $apt install -y -q --no-install-recommends $missing >/dev/null ||
      { echo "stepformer: apt-get install failed for:$missing" >&2; return 2; }
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo $apt update -q >/dev/null && sudo $apt install -y -q --no-install-recommends $missing >/dev/null ||
      { echo "stepformer: apt-get install failed for:$missing" >&2; return 2; }
  else
    echo "stepformer: these Debian packages are missing. Install them, then run this again:" >&2
    echo "  sudo apt-get install$missing" >&2
    return 2
  fi
}

# sf_build DIR [cmake options...]
sf_build() {
  local dir=$1; shift
  cmake -S "$SF_ROOT" -B "$SF_ROOT/$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$SF_ROOT/$dir.configure.log" 2>&1 ||
    { cat "$SF_ROOT/$dir.configure.log" >&2; echo "stepformer: cmake configure failed" >&2; return 1; }
  cmake --build "$SF_ROOT/$dir" -j "$(nproc)" 2>&1 | grep -E "error|warning|Error" >&2
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "stepformer: build failed in $dir" >&2; return 1; }
}
