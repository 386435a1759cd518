#!/bin/sh
# cli_gtsstream.sh VREUSE - `vreuse render FILE.gts --gts-batches --stream`: compressed index data
# through the bounded streamer (each chunk decodes its batches from the stream; from the host it
# copies only its slices). The same PNG streamed and not, from the device and the host, both
# restart modes, Lambert and batch colours; refusals and a broken file stay clear. Without a
# GPU the CPU twins run. Run by ctest ("cli-gtsstream").
. "$(dirname "$0")/cli_lib.sh"

expect gtsstream-compress 0 "wrote .*d\.gts" -- "$VREUSE" compress sphere:40k -o "$TMP/d.gts" --quiet
expect gtsstream-compress-r 0 "wrote .*r\.gts" -- \
    "$VREUSE" compress sphere:40k -o "$TMP/r.gts" --restart r --quiet

# ---- the same image in chunks of a few batches as in one run ------------------------------------
for g in d r; do
    for shade in lambert batches; do
        flag=$([ "$shade" = batches ] && echo --batches)
        "$VREUSE" render "$TMP/$g.gts" --gts-batches $flag --size 96x64 -o "$TMP/$g-$shade-1.png" \
            --quiet > /dev/null 2>&1
        for from in device host; do
            expect "gtsstream-$g-$shade-$from" 0 "chunks of at most 9362 triangles" -- \
                "$VREUSE" render "$TMP/$g.gts" --gts-batches $flag --size 96x64 --stream-mb 1 \
                --stream-from $from -o "$TMP/$g-$shade-$from.png"
            if grep -q "input: compressed (.*bits/triangle), each batch decoded" "$TMP/out"; then
                ok "gtsstream-$g-$shade-$from-input"
            else
                bad "gtsstream-$g-$shade-$from-input" "no line on the compressed input"
            fi
            if cmp -s "$TMP/$g-$shade-1.png" "$TMP/$g-$shade-$from.png"; then
                ok "gtsstream-$g-$shade-$from-same"
            else
                bad "gtsstream-$g-$shade-$from-same" "streamed (from $from) and one run differ"
            fi
        done
    done
done
# streamed sort-last parts, each decoding its own chunks (the CPU twins: on main the GPU side
# refuses streamed parts): the same image as one run
expect gtsstream-parts 0 "sort-last: 3 parts" -- "$VREUSE" render "$TMP/d.gts" --gts-batches \
    --cpu --size 96x64 --stream-mb 1 --parts 3 -o "$TMP/d-parts.png"
if cmp -s "$TMP/d-lambert-1.png" "$TMP/d-parts.png"; then ok gtsstream-parts-same; else bad \
    gtsstream-parts-same "3 streamed parts and one run differ"; fi
# 40,544 strip triangles through a queue of 9362: 5 chunks of whole batches
expect gtsstream-chunks 0 "^ *hash +[0-9]+ +5 " -- "$VREUSE" render "$TMP/d.gts" --gts-batches \
    --stream-mb 1 --no-image --reps 1 --size 64x48

# ---- refusals: exit 2 with the reason, exit 1 naming the file ------------------------------------
expect gtsstream-sort 2 "strategy sort cannot decode compressed batches" -- \
    "$VREUSE" render "$TMP/d.gts" --gts-batches --stream --strategy hash,sort
expect gtsstream-order 2 "leave --order at file" -- \
    "$VREUSE" render "$TMP/d.gts" --gts-batches --stream --order forsyth
expect gtsstream-parts-in-core 2 "--gts-batches with --gpus/--parts needs --stream" -- \
    "$VREUSE" render "$TMP/d.gts" --gts-batches --parts 2
expect gtsstream-plain 1 "not a compressed file" -- \
    "$VREUSE" render sphere:2k --gts-batches --stream --no-image --reps 1
head -c 3000 "$TMP/d.gts" > "$TMP/cut.gts"
expect gtsstream-truncated 1 "cut\.gts" -- \
    "$VREUSE" render "$TMP/cut.gts" --gts-batches --stream-from host -o "$TMP/x.png"
[ ! -e "$TMP/x.png" ] && ok gtsstream-truncated-no-png || bad gtsstream-truncated-no-png \
    "a PNG was written for a broken file"

cli_done
