#!/bin/sh
# cli_render.sh VREUSE - end-to-end checks of `vreuse render` and `vreuse view`: help, option
# errors, outputs per scene and order, the CSV, safe PNG writes, the CPU-run announcement, and
# view's refusal without a display. Without a GPU render runs the CPU twins. Run by ctest
# ("cli-render").
. "$(dirname "$0")/cli_lib.sh"

# ---- help and option errors (exit 2, the option and its accepted range named) ----------------
expect render-help 0 "usage: vreuse render .*SCENE" -- "$VREUSE" render --help
expect render-help-order 0 "--order LIST" -- "$VREUSE" render --help
expect render-unknown 2 "unknown option '--frobnicate'" -- "$VREUSE" render --frobnicate
expect render-bad-size 2 "--size '0x10': want WxH.*1\.\.8192" -- "$VREUSE" render --size 0x10
expect render-bad-yaw 2 "--yaw '5000': want a number in -3600\.\.3600" -- "$VREUSE" render --yaw 5000
expect render-bad-pitch 2 "--pitch '90': want a number in -89\.\.89" -- "$VREUSE" render --pitch 90
expect render-bad-load 2 "--load '17M': load '17M': 17000000 FMA steps, at most 16777216" -- "$VREUSE" render --load 17M
expect render-bad-order 2 "--order 'file,sideways': unknown order 'sideways'" -- \
    "$VREUSE" render --order file,sideways
expect render-csv-needs-reps 2 "--csv needs --reps" -- "$VREUSE" render --csv "$TMP/x.csv"
expect render-out-stdout 2 "--out '-'" -- "$VREUSE" render sphere:1k -o -

# ---- one PNG per scene and order ---------------------------------------------------------------
expect render-two-orders 0 "o-sphere_2k-forsyth\.png" -- \
    "$VREUSE" render sphere:2k --order file,forsyth --size 64x48 -o "$TMP/o.png" --quiet
if [ -s "$TMP/o-sphere_2k-file.png" ] && [ -s "$TMP/o-sphere_2k-forsyth.png" ] &&
    [ ! -e "$TMP/o.png" ]; then ok render-two-orders-files; else bad render-two-orders-files "$(ls "$TMP")"; fi
expect render-one-output 0 "-> $TMP/one\.png" -- \
    "$VREUSE" render sphere:2k --size 64x48 -o "$TMP/one.png" --quiet
# --seed drives --order random: batch colours follow the triangle order
"$VREUSE" render sphere:2k --order random --batches --size 64x48 -o "$TMP/s1.png" --quiet > /dev/null 2>&1
"$VREUSE" render sphere:2k --order random --seed 1 --batches --size 64x48 -o "$TMP/s1b.png" --quiet > /dev/null 2>&1
"$VREUSE" render sphere:2k --order random --seed 2 --batches --size 64x48 -o "$TMP/s2.png" --quiet > /dev/null 2>&1
if cmp -s "$TMP/s1.png" "$TMP/s1b.png" && ! cmp -s "$TMP/s1.png" "$TMP/s2.png"; then
    ok render-seed
else
    bad render-seed "seed 1 must be the default and seed 2 must differ"
fi

# ---- sort-last parts: the same image as one run; --gpus on a machine without a device --------
"$VREUSE" render sphere:3k --strategy naive,hash,patch --heatmap --size 96x64 -o "$TMP/p1.png" \
    --quiet > /dev/null 2>&1
expect render-parts 0 "sort-last: 3 parts" -- "$VREUSE" render sphere:3k --strategy naive,hash,patch \
    --heatmap --size 96x64 --parts 3 -o "$TMP/p3.png"
if cmp -s "$TMP/p1.png" "$TMP/p3.png"; then ok render-parts-same; else bad render-parts-same \
    "3 parts and one run gave different images"; fi
expect render-parts-multi 2 "multi cannot be cut into parts" -- \
    "$VREUSE" render sphere:1k --strategy naive,multi --parts 2 -o "$TMP/x.png"
expect render-parts-gpus 2 "--gpus and --parts exclude each other" -- \
    "$VREUSE" render sphere:1k --parts 2 --gpus 2 -o "$TMP/x.png"
expect render-parts-range 2 "--parts '65'" -- "$VREUSE" render sphere:1k --parts 65

# ---- bounded streaming: the same image as one run in chunks of a few batches; refusals -------
"$VREUSE" render sphere:40k --strategy naive,hash,patch --batches --size 96x64 \
    -o "$TMP/s1.png" --quiet > /dev/null 2>&1
expect render-stream 0 "chunks of at most 9362 triangles" -- "$VREUSE" render sphere:40k \
    --strategy naive,hash,patch --batches --size 96x64 --stream-mb 1 -o "$TMP/s5.png"
if cmp -s "$TMP/s1.png" "$TMP/s5.png"; then ok render-stream-same; else bad render-stream-same \
    "streamed in chunks and one run gave different images"; fi
expect render-stream-multi 2 "multi cannot run in chunks" -- \
    "$VREUSE" render sphere:1k --strategy naive,multi --stream -o "$TMP/x.png"
expect render-stream-heatmap 2 "render it without --stream" -- \
    "$VREUSE" render sphere:1k --heatmap --stream-from host -o "$TMP/x.png"
expect render-stream-parts 0 "sort-last: 3 parts" -- "$VREUSE" render sphere:40k --cpu \
    --strategy naive,hash,patch --batches --size 96x64 --stream-mb 1 --parts 3 -o "$TMP/s6.png"
if cmp -s "$TMP/s1.png" "$TMP/s6.png"; then ok render-stream-parts-same; else bad \
    render-stream-parts-same "3 streamed parts and one run gave different images"; fi
# --stream --gpus: accepted (streamed NCCL ranks); without a GPU it stops at the device
expect render-stream-gpus 1 "--gpus 2" -- "$VREUSE" render sphere:1k --stream --gpus 2 \
    -o "$TMP/x.png"
expect render-stream-from 2 "--stream-from" -- "$VREUSE" render sphere:1k --stream-from disk

# ---- --graph: off and on draw the same image (on the GPU: one CUDA graph per frame) ----------
expect render-graph-off 0 "gpu_ms" -- "$VREUSE" render sphere:40k --strategy naive,hash,patch \
    --batches --size 96x64 --graph off -o "$TMP/g0.png"
if cmp -s "$TMP/s1.png" "$TMP/g0.png"; then ok render-graph-same; else bad render-graph-same \
    "--graph off and the default gave different images"; fi
expect render-graph-csv 0 "gpu_frame_ms,graph" -- "$VREUSE" render sphere:1k --reps 1 \
    --no-image --graph on --csv -
expect render-graph-bad 2 "--graph" -- "$VREUSE" render sphere:1k --graph maybe
if "$VREUSE" render sphere:1k --size 8x8 -o "$TMP/g.png" 2>&1 | grep -q "device CPU twins"; then
    expect render-gpus-no-device 1 "--gpus 2: no CUDA device" -- \
        "$VREUSE" render sphere:1k --gpus 2 -o "$TMP/x.png"
fi

# ---- CSV: written (not appended), one header, scene names as CSV fields -----------------------
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/a,b.obj"
for run in 1 2; do
    "$VREUSE" render "$TMP/a,b.obj" sphere:1k --reps 1 --no-image --csv "$TMP/r.csv" --quiet \
        > "$TMP/out" 2>&1 || bad render-csv-run$run "exit $?"
done
if [ "$(wc -l < "$TMP/r.csv")" -eq 3 ] && head -1 "$TMP/r.csv" | grep -q '^scene,order,tris,strategy' &&
    grep -q '^"a,b\.obj",file,1,hash,' "$TMP/r.csv" && grep -q '^sphere:1k,file,' "$TMP/r.csv"; then
    ok render-csv
else
    bad render-csv "$(cat "$TMP/r.csv")"
fi
expect render-csv-stdout 0 "^scene,order,tris" -- \
    "$VREUSE" render sphere:1k --reps 1 --no-image --csv - --quiet
if [ -w /dev/full ]; then
    expect render-csv-full 1 "failed" -- \
        "$VREUSE" render sphere:1k --reps 1 --no-image --csv /dev/full --quiet
fi

# ---- PNGs: never over an input, into place only when complete ----------------------------------
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/tri.obj"
sum=$(md5sum < "$TMP/tri.obj")
expect render-out-is-input 1 "is the input" -- \
    "$VREUSE" render "$TMP/tri.obj" --size 32x32 --out "$TMP/tri.obj" --quiet
unchanged render-out-is-input-kept "$TMP/tri.obj" "$sum"
expect render-out-missing-folder 1 "folder '$TMP/missing'" -- \
    "$VREUSE" render sphere:1k --size 32x32 --out "$TMP/missing/x.png" --quiet
if [ ! -e "$TMP/missing" ]; then ok render-out-missing-folder-nothing; else bad render-out-missing-folder-nothing "$TMP/missing exists"; fi
printf 'old picture\n' > "$TMP/keep.png"
sum=$(md5sum < "$TMP/keep.png")
expect render-bad-scene 1 "nope\.obj" -- "$VREUSE" render "$TMP/nope.obj" --out "$TMP/keep.png" --quiet
unchanged render-bad-scene-kept "$TMP/keep.png" "$sum"
expect render-replace 0 "keep\.png" -- "$VREUSE" render sphere:1k --size 32x32 --out "$TMP/keep.png" --quiet
if [ "$(md5sum < "$TMP/keep.png")" != "$sum" ] && [ -z "$(ls -A "$TMP" | grep vreuse-)" ]; then
    ok render-replace-done
else
    bad render-replace-done "keep.png not replaced or a temporary left: $(ls -A "$TMP")"
fi

# ---- a long CPU run says so at once (--cpu: the CPU twins on any machine) ----------------------
expect render-cpu-announce 124 "CPU twins need about .*smaller --load" -- \
    timeout 3 "$VREUSE" render sphere:2k --load 16M --cpu --size 32x32 -o "$TMP/slow.png" --quiet
if [ ! -e "$TMP/slow.png" ]; then ok render-cpu-announce-no-png; else bad render-cpu-announce-no-png "slow.png written"; fi

# ---- view (when built with SDL2) ---------------------------------------------------------------
if "$VREUSE" view --help > /dev/null 2>&1; then
    expect view-help 0 "Tab, l, t: the next strategy, load, order" -- "$VREUSE" view --help
    expect view-bad-size 2 "--size '10': want WxH" -- "$VREUSE" view --size 10
    expect view-bad-zoom 2 "--zoom '0': want a number in 0\.01\.\.100" -- "$VREUSE" view --zoom 0
    expect view-two-scenes 2 "one scene at a time" -- "$VREUSE" view sphere:1k sphere:2k
    t0=$(date +%s)
    expect view-no-display 1 "vreuse view: no display \(DISPLAY is not set\); run it in a desktop session or under xvfb-run" -- \
        env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER timeout 10 "$VREUSE" view
    if [ $(($(date +%s) - t0)) -le 2 ]; then ok view-no-display-fast; else bad view-no-display-fast "took $(($(date +%s) - t0)) s"; fi
    # scripted frames on SDL's invisible driver, where this SDL has one
    if SDL_VIDEODRIVER=offscreen timeout 20 "$VREUSE" view sphere:1k --frames 2 --size 64x48 \
        --screenshot "$TMP/v.png" > "$TMP/out" 2>&1; then
        if [ -s "$TMP/v.png" ]; then ok view-screenshot; else bad view-screenshot "no v.png"; fi
        sum=$(md5sum < "$TMP/tri.obj")
        expect view-screenshot-is-input 1 "is the input" -- env SDL_VIDEODRIVER=offscreen \
            timeout 20 "$VREUSE" view "$TMP/tri.obj" --frames 1 --size 64x48 --screenshot "$TMP/tri.obj"
        unchanged view-screenshot-is-input-kept "$TMP/tri.obj" "$sum"
    else
        echo "SKIP cli/view-screenshot: no offscreen SDL video driver"
    fi
else
    echo "SKIP cli/view: built without SDL2"
fi

cli_done
