#!/bin/sh
# cli.sh VREUSE - end-to-end checks of the `vreuse` command line: help, the embedded default
# scene, info/sim output, exit codes and error messages for bad input. Run by ctest ("cli").
. "$(dirname "$0")/cli_lib.sh"

expect help 0 "usage: vreuse COMMAND" -- "$VREUSE" --help
expect default-scene 0 "sphere .*0\.8" -- sh -c "cd \"$TMP\" && exec \"$VREUSE\""
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

# outputs: never written over an input, a failed write fails the command
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/tri.obj"
sum=$(md5sum < "$TMP/tri.obj")
expect sim-csv-is-input 1 "is the input" -- "$VREUSE" sim "$TMP/tri.obj" --csv "$TMP/tri.obj" --quiet
unchanged sim-csv-is-input-kept "$TMP/tri.obj" "$sum"
ln -s tri.obj "$TMP/link.csv"
expect sim-csv-via-link 1 "is the input" -- "$VREUSE" sim "$TMP/tri.obj" --csv "$TMP/link.csv" --quiet
unchanged sim-csv-via-link-kept "$TMP/tri.obj" "$sum"
expect sim-json-and-csv-stdout 1 "another output already goes there" -- \
    "$VREUSE" sim sphere:1k --csv - --json - --quiet
if [ -w /dev/full ]; then
    expect info-stdout-full 1 "writing to standard output failed" -- sh -c "\"$VREUSE\" info sphere:1k > /dev/full"
    expect sim-csv-full 1 "failed" -- "$VREUSE" sim sphere:1k --csv /dev/full --quiet
fi
expect info-csv-needs-file 2 "needs a value" -- "$VREUSE" info sphere:1k --csv
expect sim-nu-limit 2 "3\.\.1024" -- "$VREUSE" sim sphere:1k --nu 2000

# two scenes with one file name in different folders: distinct outputs
mkdir -p "$TMP/a" "$TMP/b"
cp "$TMP/tri.obj" "$TMP/a/x.obj"
cp "$TMP/tri.obj" "$TMP/b/x.obj"
expect same-name-plots 0 "" -- "$VREUSE" sim "$TMP/a/x.obj" "$TMP/b/x.obj" --cache none --plot "$TMP/p.svg" --quiet
[ "$(ls "$TMP"/p-*.svg 2>/dev/null | wc -l)" -eq 2 ] && ok same-name-plots-two || bad same-name-plots-two "want 2 SVGs: $(ls "$TMP")"

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
        "$VREUSE" sim "$SCENES/cow.obj" --order forsyth+fetch --cache none --limits paper --quiet
    expect sim-bunny 0 "stanford-bunny.obj +forsyth +34834 +69451 +0\.833" -- \
        "$VREUSE" sim "$SCENES/stanford-bunny.obj" --order forsyth --quiet
else
    echo "SKIP cli/scenes: $SCENES not found"
fi

cli_done
