#!/bin/sh
# cli_hpexpand.sh VREUSE - end-to-end checks of `vreuse render --big list|hp` (the GPU
# rasterizer's two large-triangle paths, raster/raster.cu): help, bad values, the CSV's big
# column with one row per mode, the table's big column, and the same image with either mode
# (the CPU twins here: they ignore the mode, the GPU tests compare both paths with them).
# Run by ctest ("cli-hpexpand").
. "$(dirname "$0")/cli_lib.sh"

expect big-help 0 "--big LIST" -- "$VREUSE" render --help
expect big-help-hp 0 "hp \(a HistoPyramid" -- "$VREUSE" render --help
expect big-bad 2 "--big 'tiles': .*'tiles'.*list, hp" -- "$VREUSE" render --big tiles
expect big-repeat 2 "--big 'hp,hp'" -- "$VREUSE" render --big hp,hp
expect big-empty 2 "--big ''" -- "$VREUSE" render --big ''

# the CSV: one row per mode, the mode in the last column (the header's last name)
if "$VREUSE" render sphere:2k --size 96x64 --big list,hp --reps 1 --no-image --csv "$TMP/b.csv" \
    --quiet > "$TMP/out" 2>&1 && [ "$(wc -l < "$TMP/b.csv")" -eq 3 ] &&
    head -1 "$TMP/b.csv" | grep -q ',reuse,big,' && grep -q '^sphere:2k,file,.*,list,' "$TMP/b.csv" &&
    grep -q '^sphere:2k,file,.*,hp,' "$TMP/b.csv"; then
    ok big-csv
else
    bad big-csv "$(cat "$TMP/b.csv" 2>/dev/null)"
fi
# the default writes the list's rows and no big column in the table
"$VREUSE" render sphere:2k --size 96x64 --reps 1 --no-image --csv "$TMP/d.csv" --quiet \
    > "$TMP/out" 2>&1
if [ "$(wc -l < "$TMP/d.csv")" -eq 2 ] && tail -1 "$TMP/d.csv" | grep -q ',list,' &&
    ! grep -q ' big ' "$TMP/out"; then
    ok big-default
else
    bad big-default "$(cat "$TMP/d.csv" 2>/dev/null)"
fi
expect big-table 0 "strategy +load +big .*geom_ms" -- \
    "$VREUSE" render sphere:2k --size 96x64 --big all --reps 1 --no-image --quiet
expect big-table-row 0 "hash +0 +hp " -- \
    "$VREUSE" render sphere:2k --size 96x64 --big all --reps 1 --no-image --quiet

# the same image whichever mode comes first
"$VREUSE" render sphere:2k --size 96x64 --zoom 3 -o "$TMP/list.png" --quiet > /dev/null 2>&1
"$VREUSE" render sphere:2k --size 96x64 --zoom 3 --big hp -o "$TMP/hp.png" --quiet > /dev/null 2>&1
if [ -s "$TMP/list.png" ] && cmp -s "$TMP/list.png" "$TMP/hp.png"; then
    ok big-same-image
else
    bad big-same-image "list.png and hp.png differ or are missing"
fi
cli_done
