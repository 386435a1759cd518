#!/bin/sh
# cli.sh VREUSE - end-to-end checks of the `vreuse` command line: help, the embedded default
# scene, info/sim output, exit codes and error messages for bad input. Run by ctest ("cli").
set -u
VREUSE=${1:?usage: tests/cli.sh path/to/vreuse}
SCENES=${VR_SCENES:-$(dirname "$0")/../../shared/scenes}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0

# expect NAME WANT_EXIT PATTERN -- CMD...: runs CMD, checks its exit code and that its combined
# output matches the extended regular expression PATTERN.
expect() {
    name=$1 want=$2 pattern=$3
    shift 4
    "$@" > "$TMP/out" 2>&1
    got=$?
    if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$TMP/out"; then
        echo "OK   cli/$name"
        pass=$((pass + 1))
    else
        echo "FAIL cli/$name: exit $got (want $want), pattern '$pattern'; output:"
        head -20 "$TMP/out" | sed 's/^/    /'
        fail=$((fail + 1))
    fi
}

expect help 0 "usage: vreuse COMMAND" -- "$VREUSE" --help
expect default-scene 0 "sphere .*0\.8" -- "$VREUSE"
expect unknown-command 2 "unknown command 'frobnicate'" -- "$VREUSE" frobnicate
expect info-help 0 "usage: vreuse info" -- "$VREUSE" info --help
expect sim-help 0 "usage: vreuse sim" -- "$VREUSE" sim --help
expect info-generated 0 "triangles +81,920" -- "$VREUSE" info sphere
expect sim-csv 0 "^scene,order,verts,tris" -- "$VREUSE" sim sphere:10k --order file --csv - --quiet
expect sim-bad-order 2 "order" -- "$VREUSE" sim sphere --order sideways
expect missing-file 1 "nope\.obj" -- "$VREUSE" info "$TMP/nope.obj"
expect bad-generator 1 "sphere:abc" -- "$VREUSE" info sphere:abc

# a 300-byte PLY whose header claims 2^31 vertices must be refused at once, not allocated
printf 'ply\nformat binary_little_endian 1.0\nelement vertex 2147483648\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n' > "$TMP/huge.ply"
head -c 100 /dev/zero >> "$TMP/huge.ply"
expect huge-header 1 "huge\.ply" -- timeout 5 "$VREUSE" info "$TMP/huge.ply"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n' > "$TMP/range.obj"
expect index-out-of-range 1 "range\.obj" -- "$VREUSE" info "$TMP/range.obj"
printf 'v 0 0 0\nv 1 0 0\n' > "$TMP/empty.obj"
expect no-triangles 1 "empty\.obj" -- "$VREUSE" info "$TMP/empty.obj"

# compressed input: a .gts file renders; --gts-batches refuses what it cannot do
expect compress 0 "wrote .*s\.gts" -- "$VREUSE" compress sphere:2k -o "$TMP/s.gts" --quiet
expect render-gts 0 "input: compressed" -- \
    "$VREUSE" render "$TMP/s.gts" --gts-batches --size 64x48 --out "$TMP/s.png" --quiet
expect gts-batches-plain 1 "not a compressed file" -- \
    "$VREUSE" render sphere:2k --gts-batches --no-image --reps 1 --quiet
expect gts-batches-sort 2 "strategy sort cannot decode compressed batches" -- \
    "$VREUSE" render "$TMP/s.gts" --gts-batches --strategy sort
expect gts-batches-order 2 "leave --order at file" -- \
    "$VREUSE" render "$TMP/s.gts" --gts-batches --order forsyth

if [ -d "$SCENES" ]; then
    expect info-cow 0 "triangles +5,804" -- "$VREUSE" info "$SCENES/cow.obj"
    # vertex-fetch renumbering changes no count: +fetch rows equal the plain order's
    expect sim-fetch 0 "cow.obj +forsyth\+fetch +2903 +5804 +0\.833 .* 0\.727 +0\.799" -- \
        "$VREUSE" sim "$SCENES/cow.obj" --order forsyth+fetch --cache none --quiet
    expect sim-bunny 0 "stanford-bunny.obj +forsyth +34834 +69451 +0\.833" -- \
        "$VREUSE" sim "$SCENES/stanford-bunny.obj" --order forsyth --quiet
else
    echo "SKIP cli/scenes: $SCENES not found"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
