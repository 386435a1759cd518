#!/bin/sh
# cli_export.sh VREUSE - end-to-end checks of `vreuse export`: what the issue promises, as a user
# runs it (`vreuse info OUT` reports the scene's counts and `vreuse sim OUT --order file` the
# reuse of `vreuse sim SCENE --order O`, for an OBJ with texcoords, a PLY and a subdivided
# generator, each format), the read-back line, the warning when a format cannot keep a vertex,
# and refusals (usage errors, the input as output, a missing scene) that leave files as they
# were. The whole matrix of shared scenes x orders x formats is `vreuse_tests export/`.
# Run by ctest ("cli-export").
. "$(dirname "$0")/cli_lib.sh"

# same NAME A B: files A and B are equal (the sim or info CSVs of a scene and of its export)
same() {
    if cmp -s "$2" "$3"; then ok "$1"; else bad "$1" "$2 and $3 differ:"; diff "$2" "$3" | head -6; fi
}
# sim_csv FILE SCENE ORDER: every simulated count of SCENE in ORDER, without the scene and order
# columns (a CSV's name differs, its numbers may not)
sim_csv() {
    "$VREUSE" sim "$2" --order "$3" --csv - --quiet | grep -v '^#' | cut -d, -f3- > "$1"
}
info_csv() { # vertices, referenced, triangles, degenerate, ideal reuse, bounds, texcoords
    "$VREUSE" info "$2" --order "$3" --csv - --quiet | tail -n +2 | cut -d, -f3-14 > "$1"
}

n=0
for scene in "$SCENES/spot.obj" "$SCENES/horse.ply" sphere:2k@8k; do
    [ -e "$scene" ] || [ "$scene" = sphere:2k@8k ] || { echo "SKIP: no $scene"; continue; }
    label=$(basename "$scene")
    for order in forsyth random+fetch; do
        sim_csv "$TMP/want.sim" "$scene" "$order"
        info_csv "$TMP/want.info" "$scene" "$order"
        for fmt in obj ply glb gts; do
            n=$((n + 1))
            out="$TMP/x$n.$fmt"
            expect "$label-$order-$fmt" 0 "read back: the same" -- "$VREUSE" export "$scene" --order "$order" -o "$out"
            info_csv "$TMP/got.info" "$out" file
            same "$label-$order-$fmt-info" "$TMP/want.info" "$TMP/got.info"
            sim_csv "$TMP/got.sim" "$out" file
            if [ "$fmt" != gts ]; then
                same "$label-$order-$fmt-sim" "$TMP/want.sim" "$TMP/got.sim"
            else
                # the codec's own triangle order: the counts that do not depend on it are equal
                grep -E ',(ideal|naive|multi),' "$TMP/want.sim" > "$TMP/want.ideal"
                grep -E ',(ideal|naive|multi),' "$TMP/got.sim" > "$TMP/got.ideal"
                same "$label-$order-gts-sim-ideal" "$TMP/want.ideal" "$TMP/got.ideal"
            fi
        done
    done
done

# a format that cannot keep a vertex says so: an unreferenced vertex through assimp (OBJ)
printf 'ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n5 5 5\n3 0 1 2\n' > "$TMP/unused.ply"
expect unreferenced-obj 0 "warning: .*u\.obj reads back as 3 vertices \(3 referenced\) and 1 triangles, the scene has 4 \(3\) and 1: assimp" -- "$VREUSE" export "$TMP/unused.ply" -o "$TMP/u.obj"
expect unreferenced-ply 0 "read back: the same 4 vertices" -- "$VREUSE" export "$TMP/unused.ply" -o "$TMP/u.ply"
expect no-check 0 "wrote|->" -- "$VREUSE" export "$TMP/unused.ply" -o "$TMP/u2.obj" --no-check
if grep -q "read back\|warning" "$TMP/out"; then bad no-check-silent "--no-check read the file back"; else ok no-check-silent; fi

# refusals: usage errors (2), the input as output and a missing scene (1), files kept
expect no-out 2 "-o OUT is required" -- "$VREUSE" export sphere:1k
expect bad-extension 2 "-o '.*x\.stl': the extension picks the format: \.obj, \.ply, \.glb or \.gts" -- "$VREUSE" export sphere:1k -o "$TMP/x.stl"
expect stdout 2 "the extension picks the format" -- "$VREUSE" export sphere:1k -o -
expect two-orders 2 "one order per file" -- "$VREUSE" export sphere:1k --order file,forsyth -o "$TMP/x.obj"
expect bad-order 2 "--order 'sideways'" -- "$VREUSE" export sphere:1k --order sideways -o "$TMP/x.obj"
expect two-scenes 2 "" -- "$VREUSE" export sphere:1k sphere:2k -o "$TMP/x.obj"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/tri.obj"
sum=$(md5sum < "$TMP/tri.obj")
expect out-is-input 1 "is the input" -- "$VREUSE" export "$TMP/tri.obj" -o "$TMP/tri.obj"
unchanged out-is-input-kept "$TMP/tri.obj" "$sum"
echo old > "$TMP/keep.glb"
sum=$(md5sum < "$TMP/keep.glb")
expect missing-scene 1 "nope\.obj" -- "$VREUSE" export "$TMP/nope.obj" -o "$TMP/keep.glb"
unchanged missing-scene-kept "$TMP/keep.glb" "$sum"
expect no-folder 1 "no/such/dir/x\.ply" -- "$VREUSE" export sphere:1k -o "$TMP/no/such/dir/x.ply"
expect help 0 "--no-check" -- "$VREUSE" export --help
expect listed 0 "export SCENE -o F" -- "$VREUSE" --help
left=$(ls -A "$TMP" | grep -c '\.vreuse-')
if [ "$left" -eq 0 ]; then ok no-temporaries; else bad no-temporaries "$left temporary files left in $TMP"; fi
cli_done
