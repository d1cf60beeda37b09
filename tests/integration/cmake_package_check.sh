#!/usr/bin/env bash
# The CMake package: installs lanes into a scratch directory (DESTDIR), moves the installed tree
# elsewhere (the package must be relocatable), and builds a CMake project outside the source tree
# with find_package(lanes REQUIRED COMPONENTS mpi):
#   app      the README's usage example (taken from README.md), target_link_libraries(lanes::lanes),
#            run under mpirun at 3 processes in 2-process emulated nodes;
#   mpi_app  the unmodified MPI test program linked with lanes::mpi (liblanes_mpi before the MPI
#            library), run through interpose_check.sh's linked mode: every value right and the
#            statistics show lanes served the calls.
# A component that does not exist must fail find_package with lanes' message.
#   cmake_package_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null
config=$(find "$tmp/root" -name lanesConfig.cmake | head -1)
[ -n "$config" ] || { echo "FAIL: no lanesConfig.cmake installed"; exit 1; }
[ -f "$(dirname "$config")/lanesConfigVersion.cmake" ] || { echo "FAIL: no lanesConfigVersion.cmake"; exit 1; }
# <prefix>/<libdir>/cmake/lanes/lanesConfig.cmake: the prefix is as many levels up as libdir is deep.
prefix=$(dirname "$config")
while [ ! -d "$prefix/include/lanes" ]; do
  prefix=$(dirname "$prefix")
  [ "$prefix" != / ] || { echo "FAIL: no include/lanes above $config"; exit 1; }
done
mkdir -p "$tmp/elsewhere"
mv "$prefix" "$tmp/elsewhere/lanes"
moved=$tmp/elsewhere/lanes
echo "installed, then moved to <tmp>/elsewhere/lanes"

mkdir -p "$tmp/app"
sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' "$src/README.md" |
  sed -e '1,/^```cpp/d' -e '/^```/,$d' > "$tmp/app/app.cpp"
[ -s "$tmp/app/app.cpp" ] || { echo "FAIL: no example found in README.md"; exit 1; }
cp "$src/tests/mpi/interpose_check.c" "$tmp/app/"
cat > "$tmp/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(lanes_consumer C CXX)
set(LANES_COMPONENTS mpi CACHE STRING "components asked of find_package(lanes)")
find_package(lanes 0.1 REQUIRED COMPONENTS ${LANES_COMPONENTS})
find_package(MPI REQUIRED COMPONENTS C)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE lanes::lanes)
add_executable(mpi_app interpose_check.c)
target_link_libraries(mpi_app PRIVATE lanes::mpi MPI::MPI_C)
CMAKE
cmake -S "$tmp/app" -B "$tmp/app/build" -G Ninja -DCMAKE_PREFIX_PATH="$moved" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; echo "FAIL: cmake configure"; exit 1; }
cmake --build "$tmp/app/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; echo "FAIL: cmake build"; exit 1; }
echo "built with find_package(lanes REQUIRED COMPONENTS mpi): app (lanes::lanes), mpi_app (lanes::mpi)"
ldd "$tmp/app/build/app" | grep -q "$moved/.*liblanes.so.0" ||
  { ldd "$tmp/app/build/app"; echo "FAIL: app does not load the moved liblanes"; exit 1; }

out=$("$src/tests/integration/run_mpi.sh" 3 2 "$tmp/app/build/app" 2>&1) || { echo "$out"; exit 1; }
n_ok=$(echo "$out" | grep -c ': ok$' || true)
echo "app np=3: $n_ok of 3 ranks ok"
[ "$n_ok" = 3 ] || { echo "$out"; exit 1; }
"$src/tests/mpi/interpose_check.sh" 3 2 "$tmp/app/build/mpi_app" "$moved" linked

if cmake -S "$tmp/app" -B "$tmp/app/build-bad" -G Ninja -DCMAKE_PREFIX_PATH="$moved" \
     -DLANES_COMPONENTS=no-such-part >"$tmp/bad.log" 2>&1; then
  echo "FAIL: find_package(lanes COMPONENTS no-such-part) succeeded"; exit 1
fi
grep -q "no component 'no-such-part'" "$tmp/bad.log" ||
  { cat "$tmp/bad.log"; echo "FAIL: no message naming the missing component"; exit 1; }
echo "find_package(lanes COMPONENTS no-such-part) fails, naming it"
