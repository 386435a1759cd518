#!/bin/sh
# library.sh VREUSE - vreuse as a library, as a user gets it: `cmake --install` of the build that
# made VREUSE into a temporary prefix, which is then moved (the installed files must not name
# where they were built or installed); the installed tree; libvreuse.so exports exactly the
# symbols the public header declares (nm -D) under its soname; vreuse.h compiles alone as C11 and
# C++11 and includes only standard headers; tests/example/example.c built against the moved
# prefix with pkg-config and with find_package(vreuse) (shared and static) runs and passes its
# checks. Run by ctest ("library") and by .ci/run. SKIP (77) in a build without the library
# (sanitizer builds).
. "$(dirname "$0")/cli_lib.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$(dirname "$VREUSE")" && pwd)
LIB=$BUILD/pipeline/lib
if [ ! -f "$LIB/vreuse.symbols" ]; then
    echo "SKIP: $BUILD has no installable library (a sanitizer build?)"
    exit 77
fi
CC=${CC:-cc}
CXX=${CXX:-c++}
# runs NAME -- CMD...: CMD exits 0 (its output is shown when it does not)
runs() {
    name=$1
    shift 2
    if "$@" > "$TMP/out" 2>&1; then ok "$name"; else bad "$name" "exit $?; output:"; fi
}

expect install 0 "Installing: .*libvreuse\.so" -- cmake --install "$BUILD" --prefix "$TMP/inst"
mv "$TMP/inst" "$TMP/moved"
P=$TMP/moved
missing=""
for f in bin/vreuse include/vreuse.h lib/libvreuse.a lib/pkgconfig/vreuse.pc \
         lib/cmake/vreuse/vreuseConfig.cmake lib/cmake/vreuse/vreuseConfigVersion.cmake; do
    [ -f "$P/$f" ] || missing="$missing $f"
done
so=$(ls "$P"/lib/libvreuse.so.*.*.* 2>/dev/null | head -1)
[ -n "$so" ] && [ -L "$P/lib/libvreuse.so" ] || missing="$missing lib/libvreuse.so*"
if [ -z "$missing" ]; then ok install-tree; else bad install-tree "missing:$missing"; fi
# relocatable: no text file names the build, the source or the first install prefix
if grep -rlF -e "$BUILD" -e "$SRC" -e "$TMP/inst" "$P/include" "$P/lib/pkgconfig" "$P/lib/cmake" \
       > "$TMP/out"; then
    bad relocatable "absolute paths in the files above"
else
    ok relocatable
fi

# the soname changes with every release that may break the ABI: 0.MINOR before 1.0
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in
    libvreuse.so.0.[0-9]*|libvreuse.so.[1-9]*) ok "soname ($soname)" ;;
    *) bad soname "SONAME '$soname'" ;;
esac
[ -L "$P/lib/$soname" ] && ok soname-link || bad soname-link "no $soname link in $P/lib"

# exactly the public symbols: every defined dynamic symbol is declared in vreuse.h (the list the
# build read from the header), every function and variable declared there is defined
nm -D --defined-only "$so" | awk 'NF == 3 && $2 != "A" { print $3 }' | sort > "$TMP/exported"
sort "$LIB/vreuse.symbols" > "$TMP/declared"
extra=$(comm -23 "$TMP/exported" "$TMP/declared" | tr '\n' ' ')
absent=$(comm -13 "$TMP/exported" "$TMP/declared" | tr '\n' ' ')
n=$(wc -l < "$TMP/declared")
if [ -z "$extra" ] && [ -z "$absent" ] && [ "$n" -gt 50 ]; then
    ok "nm-exports ($n symbols, all declared in vreuse.h)"
else
    : > "$TMP/out"
    bad nm-exports "exported but not declared: ${extra:-none}; declared but not exported: ${absent:-none}"
fi
# ... and the list is the header's: each name occurs in it (a batcher's entry points through
# VR_REUSE_DECLARE(name))
unknown=""
for s in $(cat "$TMP/declared"); do
    grep -q "$s" "$P/include/vreuse.h" && continue
    b=${s%_run}; b=${b%_ref}; b=${b%_temp_bytes}
    grep -q "^VR_REUSE_DECLARE(${b#vr_})" "$P/include/vreuse.h" || unknown="$unknown $s"
done
[ -z "$unknown" ] && ok symbols-in-header || bad symbols-in-header "not in vreuse.h:$unknown"

# the header alone, strict, in C and C++; standard headers only
printf '#include <vreuse.h>\nint main(void) { return vr_version() == VR_VERSION ? 0 : 1; }\n' > "$TMP/h.c"
cp "$TMP/h.c" "$TMP/h.cpp"
runs header-c11 -- "$CC" -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$TMP/h.c"
runs header-cxx11 -- "$CXX" -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$TMP/h.cpp"
others=$(grep -E '^[[:space:]]*#[[:space:]]*include' "$P/include/vreuse.h" |
         grep -vE '<(stddef|stdint|stdio)\.h>' | tr '\n' ' ')
[ -z "$others" ] && ok header-includes || bad header-includes "non-standard includes: $others"

# the example with pkg-config (the shared library, found through the .pc file's own location)
PKG_CONFIG_PATH=$P/lib/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs vreuse)
libdir=$(pkg-config --variable=libdir vreuse)
runs pkg-config-build -- "$CC" -std=c11 -Wall -Wextra -Werror "$SRC/tests/example/example.c" \
    $flags -Wl,-rpath,"$libdir" -o "$TMP/example_pc"
expect pkg-config-run 0 "example: all checks passed" -- "$TMP/example_pc"
cp "$TMP/out" "$TMP/example.txt"
loaded=$(ldd "$TMP/example_pc" 2>/dev/null | awk '/libvreuse/ { print $3 }')
if [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$so")" ]; then
    ok pkg-config-loads-moved
else
    bad pkg-config-loads-moved "example_pc loads '${loaded:-no libvreuse}', not $so"
fi

# the example with find_package(vreuse): vreuse::vreuse and vreuse::vreuse_static
expect cmake-configure 0 "vreuse [0-9.]+ from $P/lib/cmake/vreuse" -- \
    cmake -S "$SRC/tests/example" -B "$TMP/exb" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release
runs cmake-build -- cmake --build "$TMP/exb"
expect cmake-shared-run 0 "example: all checks passed" -- "$TMP/exb/example_shared"
expect cmake-static-run 0 "example: all checks passed" -- "$TMP/exb/example_static"
if ldd "$TMP/exb/example_static" 2>/dev/null | grep -q libvreuse; then
    bad static-is-static "example_static loads libvreuse.so"
else
    ok static-is-static
fi
sed 's/^/    /' "$TMP/example.txt"
cli_done
