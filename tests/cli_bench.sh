#!/bin/sh
# cli_bench.sh VREUSE - end-to-end checks of `vreuse bench`, `bench-gts`, `plot-bench` and (when it
# was built beside vreuse) `vreuse_glref`: help, usage errors found before any device check,
# outputs that never overwrite an input and leave nothing behind on failure, the no-device
# message, and plot-bench on committed and order-column CSVs. Run by ctest ("cli-bench").
. "$(dirname "$0")/cli_lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GLREF=$(dirname "$VREUSE")/vreuse_glref

# ---- help -----------------------------------------------------------------------------------
expect bench-help 0 "^ +--warp-batch N" -- "$VREUSE" bench --help
expect bench-gts-help 0 "usage: vreuse bench-gts SCENE.*" -- "$VREUSE" bench-gts --help
expect plot-help 0 "-o, --out FILE" -- "$VREUSE" plot-bench --help

# ---- usage errors: exit 2 before any device is looked for -----------------------------------
expect bench-nu 2 "--nu '2000'.*3\.\.1024" -- "$VREUSE" bench sphere:1k --nu 2000
expect bench-block 2 "--block '64,48': '48'.*multiple of 32 in 32\.\.1024" -- "$VREUSE" bench sphere:1k --block 64,48
expect bench-order 2 "unknown order 'sideways'" -- "$VREUSE" bench sphere:1k --order forsyth,sideways
expect bench-load 2 "load 'loop:99999999': 99999999 FMA steps, at most 16777216" -- "$VREUSE" bench sphere:1k --load loop:99999999
expect bench-unknown 2 "unknown option '--batch'" -- "$VREUSE" bench sphere:1k --batch 96
expect bench-warp-batch 2 "--warp-batch '100'.*multiple of 3" -- "$VREUSE" bench sphere:1k --warp-batch 100
expect bench-store 2 "unknown 'fast' \(direct, staged, all\)" -- "$VREUSE" bench sphere:1k --store fast
expect bench-cull 2 "unknown 'bogus' \(off, ink, collate, atomic, cub, hp, all\)" -- "$VREUSE" bench sphere:1k --cull ink,bogus
expect bench-no-scene 2 "no scene given" -- "$VREUSE" bench --reps 3
expect bench-queue-md 2 "--queue-write writes a table and --csv only" -- \
    "$VREUSE" bench sphere:1k --queue-write --md "$TMP/q.md"
expect bench-gts-restart 2 "unknown 'both' \(r, deg, all\)" -- "$VREUSE" bench-gts sphere:1k --restart both
expect bench-gts-block 2 "--block '256,48'" -- "$VREUSE" bench-gts sphere:1k --block 256,48
expect bench-gts-reps 2 "--reps '0'.*1\.\.100000" -- "$VREUSE" bench-gts sphere:1k --reps 0
# --gpus N (bench/bench_gpus.h): the count, and what it does not go with
expect bench-gpus-help 0 "^ +--gpus N +also run each row's stage on N GPUs" -- "$VREUSE" bench --help
expect bench-gpus-help-columns 0 "gpus,$" -- "$VREUSE" bench --help
expect bench-gpus-zero 2 "vreuse bench: --gpus '0': want a whole number in 1\.\.64" -- "$VREUSE" bench sphere:1k --gpus 0
expect bench-gpus-many 2 "vreuse bench: --gpus '65': want a whole number in 1\.\.64" -- "$VREUSE" bench sphere:1k --gpus 65
expect bench-gpus-word 2 "--gpus 'two'" -- "$VREUSE" bench sphere:1k --gpus two
expect bench-gpus-cpu 2 "unknown option '--cpu'" -- "$VREUSE" bench sphere:1k --gpus 2 --cpu
expect bench-gpus-queue-write 2 "--queue-write times queue stores on one GPU \(no --gpus\)" -- \
    "$VREUSE" bench sphere:1k --gpus 2 --queue-write

# ---- outputs: checked before the device, never over an input --------------------------------
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/tri.obj"
sum_tri=$(md5sum < "$TMP/tri.obj")
expect bench-csv-is-input 1 "is the input" -- "$VREUSE" bench "$TMP/tri.obj" --csv "$TMP/tri.obj"
unchanged bench-csv-is-input-kept "$TMP/tri.obj" "$sum_tri"
expect bench-md-missing-folder 1 "Markdown '$TMP/no/b\.md'" -- "$VREUSE" bench sphere:1k --md "$TMP/no/b.md"
expect bench-two-stdout 1 "another output already goes there" -- "$VREUSE" bench sphere:1k --csv - --md -
expect bench-gts-csv-is-input 1 "is the input" -- "$VREUSE" bench-gts "$TMP/tri.obj" --csv "$TMP/tri.obj"
unchanged bench-gts-csv-is-input-kept "$TMP/tri.obj" "$sum_tri"

# ---- no device: a clear message and exit 1 (skipped where a GPU answers) --------------------
if nvidia-smi -L > /dev/null 2>&1; then
    echo "SKIP cli/bench-no-device: a GPU is present"
else
    expect bench-no-device 1 "vreuse bench: .*needs a CUDA build and device" -- "$VREUSE" bench sphere:1k
    expect bench-gts-no-device 1 "vreuse bench-gts: .*CUDA" -- "$VREUSE" bench-gts sphere:1k
    expect bench-gpus-no-device 1 "vreuse bench: .*needs a CUDA build and device" -- "$VREUSE" bench sphere:1k --gpus 2
fi

# ---- plot-bench -----------------------------------------------------------------------------
CSV=$ROOT/bench/results/geometry-h100.csv
if [ -f "$CSV" ]; then
    # a CSV from before the order column: one panel per scene, as always
    expect plot-committed 0 "wrote .*fig9\.svg" -- "$VREUSE" plot-bench "$CSV" -o "$TMP/fig9.svg"
    expect plot-committed-bars 0 "<title>sphere:7M · simple · naive: 0\.343 ms at block 256, 1\.000 of naive" -- \
        cat "$TMP/fig9.svg"
    expect plot-scene-list 0 "wrote" -- \
        "$VREUSE" plot-bench "$CSV" -o "$TMP/two.svg" --scene sphere:7M,igea.ply --block 128
    expect plot-scene-list-panels 0 "^2$" -- sh -c "grep -c 'font-weight=\"bold\">' \"$TMP/two.svg\""
else
    echo "SKIP cli/plot-committed: $CSV not found"
fi
cp "$CSV" "$TMP/in.csv" 2>/dev/null || printf 'scene,strategy,load,ms_med\na,naive,simple,2\n' > "$TMP/in.csv"
sum=$(md5sum < "$TMP/in.csv")
expect plot-out-is-input 1 "is the input" -- "$VREUSE" plot-bench "$TMP/in.csv" -o "$TMP/in.csv"
unchanged plot-out-is-input-kept "$TMP/in.csv" "$sum"
if [ -w /dev/full ]; then
    expect plot-full 1 "writing '/dev/full' failed" -- "$VREUSE" plot-bench "$TMP/in.csv" -o /dev/full
fi
expect plot-missing-folder 1 "SVG '$TMP/nowhere/f\.svg'" -- \
    "$VREUSE" plot-bench "$TMP/in.csv" -o "$TMP/nowhere/f.svg"
if [ -e "$TMP/nowhere" ] || ls -a "$TMP" | grep -q 'vreuse-'; then
    bad plot-missing-folder-clean "a folder or a temporary file was left behind"
else
    ok plot-missing-folder-clean
fi
expect plot-no-out 2 "-o F\.svg is required" -- "$VREUSE" plot-bench "$TMP/in.csv"
expect plot-two-csv 2 "one CSV only" -- "$VREUSE" plot-bench "$TMP/in.csv" "$TMP/in.csv" -o "$TMP/x.svg"
expect plot-block 2 "--block 'fast': want best or a thread count" -- \
    "$VREUSE" plot-bench "$TMP/in.csv" -o "$TMP/x.svg" --block fast

# an order column: one panel per (scene, order), bars named with their order
cat > "$TMP/orders.csv" <<'EOF'
# command: vreuse bench a.obj --order forsyth,file
scene,order,tris,strategy,load,block,ms_med,bound,status
a.obj,forsyth,1000,naive,simple,64,2.0,1.000,ok
a.obj,forsyth,1000,warp,simple,64,1.0,3.000,ok
a.obj,file,1000,naive,simple,64,2.0,1.000,ok
a.obj,file,1000,warp,simple,64,1.5,2.000,ok
EOF
expect plot-orders 0 "wrote" -- "$VREUSE" plot-bench "$TMP/orders.csv" -o "$TMP/orders.svg" --scene a.obj
expect plot-orders-bar 0 "<title>a\.obj · file · simple · warp: 1\.50 ms at block 64, 0\.750 of naive" -- \
    cat "$TMP/orders.svg"
expect plot-orders-panels 0 "^2$" -- sh -c "grep -c 'dx=\"5\">· f' \"$TMP/orders.svg\""
expect plot-orders-caption 0 "data: vreuse bench a\.obj" -- cat "$TMP/orders.svg"

# ---- vreuse_glref (built only where EGL and GL headers were found) ---------------------------
if [ -x "$GLREF" ]; then
    expect glref-help 0 "--order LIST" -- "$GLREF" --help
    expect glref-order 2 "vreuse glref: --order 'sideways'" -- "$GLREF" sphere:1k --order sideways
    expect glref-size 2 "--size '0x10'" -- "$GLREF" sphere:1k --size 0x10
    expect glref-csv-is-input 1 "is the input" -- "$GLREF" "$TMP/tri.obj" --csv "$TMP/tri.obj"
    unchanged glref-csv-is-input-kept "$TMP/tri.obj" "$sum_tri"
else
    echo "SKIP cli/glref: $GLREF not built"
fi

cli_done
