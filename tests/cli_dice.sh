#!/bin/sh
# cli_dice.sh VREUSE - end-to-end checks of `vreuse dice`: help and listing, usage errors (bad
# volume, -o not .ply), refused outputs (the scene itself, a missing folder) that leave files
# untouched, an unreadable scene, and a CPU run whose PLY, PNG and CSV are checked (the box's
# count follows from its faces; the same bytes on a second run). Run by ctest ("cli-dice").
. "$(dirname "$0")/cli_lib.sh"

# ---- help -----------------------------------------------------------------------------------
expect dice-help 0 "usage: vreuse dice SCENE \[options\]" -- "$VREUSE" dice --help
expect dice-help-volume 0 "8\.\.2048 \(default 256" -- "$VREUSE" help dice
expect dice-listed 0 "dice SCENE +the paper's Dicer" -- "$VREUSE" --help

# ---- usage errors ---------------------------------------------------------------------------
expect dice-volume-small 2 "--volume '7'.*8\.\.2048" -- "$VREUSE" dice sphere --volume 7
expect dice-volume-big 2 "--volume '4096'.*8\.\.2048" -- "$VREUSE" dice sphere --volume 4096
expect dice-volume-text 2 "--volume 'many'" -- "$VREUSE" dice sphere --volume many
expect dice-no-scene 2 "vreuse dice: " -- "$VREUSE" dice
expect dice-two-scenes 2 "vreuse dice: " -- "$VREUSE" dice sphere sphere:2k
expect dice-out-ext 2 "-o '$TMP/p\.obj': the points are written as PLY; name the file \*\.ply" -- \
    "$VREUSE" dice sphere:2k --volume 8 -o "$TMP/p.obj"
expect dice-out-stdout 2 "-o -: the PLY is binary" -- "$VREUSE" dice sphere:2k --volume 8 -o -

# ---- inputs and outputs ---------------------------------------------------------------------
expect dice-missing 1 "vreuse dice: .*$TMP/none\.obj" -- "$VREUSE" dice "$TMP/none.obj" --volume 8
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n' > "$TMP/tet.ply.obj"
cp "$TMP/tet.ply.obj" "$TMP/in.ply"
sum_in=$(md5sum < "$TMP/in.ply")
expect dice-out-is-input 1 "in\.ply" -- "$VREUSE" dice "$TMP/in.ply" --volume 8 -o "$TMP/in.ply"
unchanged dice-out-is-input-kept "$TMP/in.ply" "$sum_in"
expect dice-out-folder 1 "PLY '$TMP/no/p\.ply'" -- "$VREUSE" dice sphere:2k --volume 8 -o "$TMP/no/p.ply"
expect dice-png-folder 1 "PNG '$TMP/no/p\.png'" -- "$VREUSE" dice sphere:2k --volume 8 --png "$TMP/no/p.png"

# ---- a run: an axis-aligned box 1 x 0.5 x 0.3 (its z faces: 2 x 16 x 32 cells at volume 32) --
cat > "$TMP/box.obj" <<'OBJ'
v -0.5 -0.25 -0.15
v 0.5 -0.25 -0.15
v -0.5 0.25 -0.15
v 0.5 0.25 -0.15
v -0.5 -0.25 0.15
v 0.5 -0.25 0.15
v -0.5 0.25 0.15
v 0.5 0.25 0.15
f 1 3 2
f 2 3 4
f 5 6 7
f 6 8 7
f 1 2 5
f 2 6 5
f 3 7 4
f 4 7 8
f 1 5 3
f 3 5 7
f 2 4 6
f 4 8 6
OBJ
expect dice-box 0 "volume 32\^3: 1024 points" -- \
    "$VREUSE" dice "$TMP/box.obj" --volume 32 --cpu -o "$TMP/box.ply" --png "$TMP/box.png" --csv "$TMP/box.csv"
expect dice-ply-header 0 "element vertex 1024" -- head -c 300 "$TMP/box.ply"
expect dice-ply-props 0 "property float z" -- head -c 300 "$TMP/box.ply"
size=$(wc -c < "$TMP/box.ply")
header=$(head -c 400 "$TMP/box.ply" | grep -a -b -o "end_header" | head -1 | cut -d: -f1)
if [ $((size - header - 11)) -eq $((1024 * 12)) ]; then ok dice-ply-size; else bad dice-ply-size "$size bytes, header ends at $header"; fi
expect dice-png 0 "PNG image data, 768 x 768" -- file "$TMP/box.png"
expect dice-csv 0 "^box\.obj,12,32,cpu,1024," -- cat "$TMP/box.csv"
sum_ply=$(md5sum < "$TMP/box.ply")
expect dice-again 0 "device CPU twins \(--cpu\)" -- "$VREUSE" dice "$TMP/box.obj" --volume 32 --cpu -o "$TMP/box.ply"
unchanged dice-deterministic "$TMP/box.ply" "$sum_ply"
expect dice-csv-stdout 0 "^scene,tris,volume,device,points" -- "$VREUSE" dice sphere:2k --volume 8 --cpu --csv -

# ---- a mesh with no extent: a clear error, nothing written ----------------------------------
printf 'v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n' > "$TMP/dot.obj"
expect dice-flat 1 "vreuse dice: .*one point" -- "$VREUSE" dice "$TMP/dot.obj" --volume 8 -o "$TMP/dot.ply"
expect dice-flat-nothing 0 "^absent$" -- sh -c "test ! -e \"$TMP/dot.ply\" && echo absent"
cli_done
