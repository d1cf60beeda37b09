#!/usr/bin/env bash
# Installs lanes into a scratch directory, compiles the README's usage example (taken from
# README.md itself) with `g++ -std=c++20 app.cpp $(pkg-config --cflags --libs lanes)`, and runs it
# under mpirun at 3, 4 and 5 processes in 2-process emulated nodes.
#   installed_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null
pc=$(find "$tmp/root" -name lanes.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no lanes.pc installed"; exit 1; }
lib=$(dirname "$(find "$tmp/root" -name 'liblanes.so' | head -1)")
[ -n "$(find "$tmp/root" -path '*include/lanes/lanes.hpp')" ] || { echo "FAIL: no lanes.hpp"; exit 1; }

# The example exactly as the README shows it.
sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' "$src/README.md" |
  sed -e '1,/^```cpp/d' -e '/^```/,$d' > "$tmp/app.cpp"
[ -s "$tmp/app.cpp" ] || { echo "FAIL: no example found in README.md"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$tmp/root"
g++ -std=c++20 "$tmp/app.cpp" $(pkg-config --cflags --libs lanes) -Wl,-rpath,"$lib" -o "$tmp/app"
echo "compiled: g++ -std=c++20 app.cpp \$(pkg-config --cflags --libs lanes)"
for np in 3 4 5; do
  out=$("$src/tests/integration/run_mpi.sh" "$np" 2 "$tmp/app" 2>&1) || { echo "$out"; exit 1; }
  n_ok=$(echo "$out" | grep -c ': ok$' || true)
  echo "np=$np: $n_ok of $np ranks ok"
  [ "$n_ok" = "$np" ] || { echo "$out"; exit 1; }
done
