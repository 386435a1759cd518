#!/bin/sh
# cli_apply.sh VREUSE - end-to-end checks of `vreuse apply subdivide|envelope|walk`: help and
# listing, usage errors (no or unknown application, a scene for the walk, bad --strategy,
# --epsilon, --device, --agents, --lanes, batch limits, -o extension), refused inputs and
# outputs (a missing file, a malformed OBJ, -o over the input, /dev/full, a missing folder) that
# leave files untouched, and
# a CPU run of each application with --strategy all whose outputs are read back (the mesh through
# `vreuse info`, the cells CSV summed, the PNGs by `file`). Run by ctest ("cli-apply").
. "$(dirname "$0")/cli_lib.sh"

# ---- help -----------------------------------------------------------------------------------
expect apply-listed 0 "apply APP \[SCENE\] +Section 5" -- "$VREUSE" --help
expect apply-help 0 "usage: vreuse apply subdivide\|envelope\|walk" -- "$VREUSE" apply --help
expect apply-help-cmd 0 "walk +the random walk" -- "$VREUSE" help apply
expect apply-help-subdivide 0 "usage: vreuse apply subdivide SCENE \[options\]" -- \
    "$VREUSE" apply subdivide --help
expect apply-help-envelope 0 "--check +count the self-intersecting" -- "$VREUSE" apply envelope --help
expect apply-help-check-slow 0 "\(slow: a sphere of 1M" -- "$VREUSE" apply envelope --help
expect apply-help-walk 0 "--placement random\|sorted" -- "$VREUSE" apply walk --help

# ---- usage errors ---------------------------------------------------------------------------
expect apply-no-app 2 "vreuse apply: name an application: subdivide, envelope or walk" -- "$VREUSE" apply
expect apply-unknown 2 "vreuse apply: unknown application 'smooth'" -- "$VREUSE" apply smooth sphere
expect apply-no-scene 2 "vreuse apply subdivide: no scene given" -- "$VREUSE" apply subdivide
expect apply-two-scenes 2 "one scene at a time" -- "$VREUSE" apply envelope sphere sphere:2k
expect apply-walk-scene 2 "vreuse apply walk: takes no SCENE \('sphere'\)" -- "$VREUSE" apply walk sphere
expect apply-strategy 2 "--strategy 'fastest'" -- "$VREUSE" apply subdivide sphere --strategy fastest
expect apply-walk-plan 2 "--strategy patch: needs a triangle mesh" -- \
    "$VREUSE" apply walk --strategy naive,patch
expect apply-epsilon-zero 2 "--epsilon '0': want a number in 0.0001..1" -- \
    "$VREUSE" apply envelope sphere --epsilon 0
expect apply-epsilon-big 2 "--epsilon '1.5'" -- "$VREUSE" apply envelope sphere --epsilon 1.5
expect apply-epsilon-text 2 "--epsilon 'two'" -- "$VREUSE" apply envelope sphere --epsilon two
expect apply-epsilon-walk 2 "unknown option '--epsilon'" -- "$VREUSE" apply walk --epsilon 0.1
expect apply-device 2 "--device 'tpu'" -- "$VREUSE" apply subdivide sphere --device tpu
expect apply-agents 2 "--agents '0'" -- "$VREUSE" apply walk --agents 0
expect apply-steps 2 "--steps '1001'" -- "$VREUSE" apply walk --steps 1001
expect apply-out-ext 2 "-o '$TMP/s\.stl': the extension picks the format" -- \
    "$VREUSE" apply subdivide sphere:200 -o "$TMP/s.stl"
expect apply-out-stdout 2 "-o -: the mesh formats are files" -- "$VREUSE" apply subdivide sphere:200 -o -
expect apply-walk-resort 0 "identical outputs: every strategy" -- \
    "$VREUSE" apply walk --agents 2000 --steps 2 --resort --strategy naive,warp,hash,multi --device cpu
expect apply-walk-resort-time 0 "--resort: the sort by cell took [0-9.]+-[0-9.]+ ms per step" -- \
    "$VREUSE" apply walk --agents 2000 --steps 2 --resort --strategy naive,hash --device cpu
expect apply-lanes-odd 2 "--lanes 3: want 1, 2, 4, 8, 16 or 32" -- "$VREUSE" apply walk --lanes 3
expect apply-lanes-big 2 "--lanes '64': want a whole number in 1..32" -- "$VREUSE" apply walk --lanes 64
expect apply-lanes-subdivide 2 "unknown option '--lanes'" -- "$VREUSE" apply subdivide sphere --lanes 8
expect apply-walk-lanes 0 "identical outputs: every strategy" -- \
    "$VREUSE" apply walk --agents 2000 --steps 2 --resort --lanes 8 --strategy naive,sort --device cpu
expect apply-walk-lanes-cpu 0 "--lanes 8: a GPU setting; the CPU twins evaluate each cell in one" -- \
    "$VREUSE" apply walk --agents 200 --steps 1 --lanes 8 --strategy naive --device cpu
expect apply-max-indices-arity 2 "--max-indices 100: batches hold whole primitives of 3 indices" -- \
    "$VREUSE" apply subdivide sphere:200 --max-indices 100
expect apply-warp-batch-arity 2 "--warp-batch 50: batches hold whole primitives of 3 indices" -- \
    "$VREUSE" apply envelope sphere:200 --warp-batch 50
expect apply-block-32 2 "--block '100': want a whole number that is a multiple of 32" -- \
    "$VREUSE" apply walk --block 100
expect apply-nu-range 2 "--nu '2': want a whole number in 3..1024" -- "$VREUSE" apply walk --nu 2
expect apply-limits 0 "batch limits: block 128, N_u 64, 300 indices per dynamic batch, warp batch 64$" -- \
    "$VREUSE" apply walk --agents 2000 --steps 1 --block 128 --nu 64 --max-indices 300 \
    --warp-batch 64 --strategy naive,warp,hash,sort --device cpu
expect apply-limits-csv 0 "^walk,random,2000,sort,cpu,.*,yes,128,64,300,64,1$" -- \
    "$VREUSE" apply walk --agents 2000 --steps 1 --block 128 --nu 64 --max-indices 300 \
    --warp-batch 64 --strategy naive,sort --device cpu --quiet --csv -
expect apply-limits-paper 0 "batch limits: per strategy \(the paper's for Loop subdivision, Section 5\.1;" -- \
    "$VREUSE" apply subdivide sphere:200 --strategy naive,hash,sort --device cpu
expect apply-limits-paper-rows 0 "^hash +cpu +b64 u64 i192 " -- \
    "$VREUSE" apply subdivide sphere:200 --strategy naive,hash,sort --device cpu
expect apply-limits-render 0 "warp batch 96 \(the renderer's, the paper's Section 4\)$" -- \
    "$VREUSE" apply subdivide sphere:200 --strategy naive,hash --limits render --device cpu
expect apply-limits-envelope-csv 0 "^envelope,sphere:200,320,hash,cpu,.*,yes,128,128,576,96,1$" -- \
    "$VREUSE" apply envelope sphere:200 --strategy naive,hash --device cpu --quiet --csv -
expect apply-limits-override 0 "^sort +cpu +b128 u256 i768 " -- \
    "$VREUSE" apply subdivide sphere:200 --strategy hash,sort --block 128 --device cpu
expect apply-limits-walk 2 "unknown option '--limits'" -- "$VREUSE" apply walk --limits paper
expect apply-same-outputs 2 "'$TMP/x\.png' is named for two outputs" -- \
    "$VREUSE" apply walk --png "$TMP/x.png" --csv "$TMP/x.png"

# ---- devices --------------------------------------------------------------------------------
if "$VREUSE" apply subdivide sphere:200 --strategy naive -q 2>&1 | grep -q "times: CPU twins"; then
    expect apply-gpu-none 1 "vreuse apply subdivide: --device gpu: no CUDA device" -- \
        "$VREUSE" apply subdivide sphere:200 --device gpu
else
    expect apply-gpu 0 "naive +gpu " -- "$VREUSE" apply subdivide sphere:200 --device gpu --strategy naive,hash
    expect apply-envelope-gpu 0 "identical outputs" -- \
        "$VREUSE" apply envelope sphere:200 --device gpu --strategy naive,sort
    expect apply-walk-lanes-gpu 0 "--lanes 8: 8 GPU threads evaluate each cell's moves" -- \
        "$VREUSE" apply walk --agents 3000 --steps 2 --resort --lanes 8 --device gpu
fi

# ---- inputs and outputs ---------------------------------------------------------------------
expect apply-missing 1 "vreuse apply subdivide: .*$TMP/none\.obj" -- "$VREUSE" apply subdivide "$TMP/none.obj"
printf 'v 0 0 0\nv 1 0 0\nf 1 2 7\n' > "$TMP/bad.obj"
expect apply-malformed 1 "vreuse apply envelope: .*bad\.obj" -- "$VREUSE" apply envelope "$TMP/bad.obj"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n' > "$TMP/tet.obj"
"$VREUSE" export "$TMP/tet.obj" -o "$TMP/tet.ply" -q > /dev/null
sum_in=$(md5sum < "$TMP/tet.ply")
expect apply-out-is-input 1 "tet\.ply" -- "$VREUSE" apply subdivide "$TMP/tet.ply" -o "$TMP/tet.ply"
unchanged apply-out-is-input-kept "$TMP/tet.ply" "$sum_in"
expect apply-png-is-input 1 "tet\.ply" -- "$VREUSE" apply envelope "$TMP/tet.ply" --png "$TMP/tet.ply"
unchanged apply-png-is-input-kept "$TMP/tet.ply" "$sum_in"
expect apply-out-folder 1 "mesh '$TMP/no/s\.ply'" -- "$VREUSE" apply subdivide sphere:200 -o "$TMP/no/s.ply"
if [ -w /dev/full ]; then
    expect apply-full-png 1 "vreuse apply subdivide: .*/dev/full" -- \
        "$VREUSE" apply subdivide sphere:200 --strategy naive --device cpu --png /dev/full
    expect apply-full-csv 1 "vreuse apply envelope: .*/dev/full" -- \
        "$VREUSE" apply envelope sphere:200 --device cpu --csv /dev/full
    expect apply-full-cells 1 "vreuse apply walk: .*/dev/full" -- \
        "$VREUSE" apply walk --agents 100 --steps 1 --strategy naive --device cpu -o /dev/full
fi

# ---- subdivide: every strategy on the CPU, the mesh read back -------------------------------
expect apply-subdivide 0 "identical outputs: every strategy's mesh equals naive's" -- \
    "$VREUSE" apply subdivide "$TMP/tet.ply" --strategy all --device cpu -o "$TMP/tet-1.ply" \
    --png "$TMP/tet-1.png" --csv "$TMP/tet-1.csv" --size 64x48
unchanged apply-subdivide-input-kept "$TMP/tet.ply" "$sum_in"
cp "$TMP/out" "$TMP/run"
expect apply-subdivide-table 0 "^meshlet +cpu +b256 u256 i768 +[0-9.]+ +[0-9.]+ +4 +1\.000 +0\.667 " -- cat "$TMP/run"
expect apply-subdivide-info 0 "triangles +16$" -- "$VREUSE" info "$TMP/tet-1.ply"
expect apply-subdivide-vertices 0 "vertices +10$" -- "$VREUSE" info "$TMP/tet-1.ply"
expect apply-subdivide-png 0 "PNG image data, 128 x 68" -- file "$TMP/tet-1.png"
expect apply-subdivide-csv 0 "^subdivide,tet\.ply,4,sort,cpu,[0-9.]+,[0-9.]+,4,1\.0000,0\.6667,[0-9.]+,1,yes,256,256,768,96,1$" -- cat "$TMP/tet-1.csv"
rows=$(grep -c "^subdivide," "$TMP/tet-1.csv")
if [ "$rows" -eq 8 ]; then ok apply-subdivide-csv-rows; else bad apply-subdivide-csv-rows "$rows rows"; fi
sum_out=$(md5sum < "$TMP/tet-1.ply")
expect apply-subdivide-again 0 "identical outputs" -- \
    "$VREUSE" apply subdivide "$TMP/tet.ply" --strategy hash,naive --device cpu -o "$TMP/tet-1.ply"
unchanged apply-subdivide-deterministic "$TMP/tet-1.ply" "$sum_out"
expect apply-subdivide-obj 0 "mesh -> $TMP/s\.obj \(1,002 vertices, 2,000 triangles\)" -- \
    "$VREUSE" apply subdivide sphere:500 --strategy naive,multi --device cpu -o "$TMP/s.obj"
expect apply-subdivide-obj-info 0 "triangles +2,000" -- "$VREUSE" info "$TMP/s.obj"
expect apply-subdivide-csv-stdout 0 "^app,input,primitives,strategy" -- \
    "$VREUSE" apply subdivide sphere:200 --strategy naive --device cpu --csv -
if [ -f "$SCENES/teapot.obj" ]; then
    expect apply-subdivide-teapot 0 "identical outputs" -- \
        "$VREUSE" apply subdivide "$SCENES/teapot.obj" --strategy all --device cpu
fi

# ---- envelope: every strategy through the CPU twins, both directions, the check --------------------------------
expect apply-envelope 0 "offsets min .*; octree" -- \
    "$VREUSE" apply envelope sphere:2k --strategy all --device cpu --check -o "$TMP/env.ply" \
    --png "$TMP/env.png" --csv "$TMP/env.csv" --size 200x160
cp "$TMP/out" "$TMP/run"
expect apply-envelope-same 0 "identical outputs: every strategy's mesh equals naive's" -- cat "$TMP/run"
expect apply-envelope-row 0 "^meshlet +cpu " -- cat "$TMP/run"
expect apply-envelope-check 0 "input 0, output 0, no new ones" -- cat "$TMP/run"
expect apply-envelope-info 0 "triangles +2,000" -- "$VREUSE" info "$TMP/env.ply"
expect apply-envelope-png 0 "PNG image data, 200 x 220" -- file "$TMP/env.png"
expect apply-envelope-csv 0 "^envelope,sphere:2k,2000,naive,cpu," -- cat "$TMP/env.csv"
expect apply-envelope-inner 0 "envelope \(inner\): epsilon .* \(10% of the box diagonal\)" -- \
    "$VREUSE" apply envelope sphere:2k --inner --epsilon 0.1 --device cpu -o "$TMP/inner.glb"
expect apply-envelope-glb-info 0 "triangles +2,000" -- "$VREUSE" info "$TMP/inner.glb"

# ---- walk: small, every strategy, the cells read back ---------------------------------------
expect apply-walk 0 "identical outputs: every strategy's final cells equal naive's" -- \
    "$VREUSE" apply walk --agents 3000 --steps 2 --strategy all --device cpu \
    -o "$TMP/cells.csv" --png "$TMP/walk.png" --csv "$TMP/walk.csv"
cp "$TMP/out" "$TMP/run"
expect apply-walk-rows 0 "^multi +cpu " -- cat "$TMP/run"
expect apply-walk-no-plans 0 "^absent$" -- sh -c "grep -q '^patch' \"$TMP/run\" || echo absent"
expect apply-walk-cells-header 0 "^x,y,count$" -- head -1 "$TMP/cells.csv"
total=$(tail -n +2 "$TMP/cells.csv" | awk -F, '{ s += $3 } END { print s }')
if [ "$total" = 3000 ]; then ok apply-walk-cells-sum; else bad apply-walk-cells-sum "sum $total"; fi
expect apply-walk-png 0 "PNG image data, 878 x 788" -- file "$TMP/walk.png"
expect apply-walk-csv 0 "^walk,random,3000,naive,cpu,.*,6000,3000\.0000,0\.0000," -- cat "$TMP/walk.csv"
expect apply-walk-sorted 0 "placed at random, then sorted by cell" -- \
    "$VREUSE" apply walk --agents 3000 --steps 1 --placement sorted --strategy naive,sort \
    --device cpu --seed 7
expect apply-walk-stdout 0 "^x,y,count" -- \
    "$VREUSE" apply walk --agents 500 --steps 1 --strategy naive --device cpu -o -
cli_done
