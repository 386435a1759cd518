#!/bin/sh
# cli_gpupatch.sh VREUSE - end-to-end checks of --patch-builder (the GPU patch builder, issue 14):
# sim simulates the GPU builder's plan through its CPU reference and adds the CPU and GPU
# builders' times to the preprocessing table; render and bench take the option; bad values are
# usage errors; the default output is unchanged. Run by ctest ("cli-gpupatch").
. "$(dirname "$0")/cli_lib.sh"
has() { if grep -Eq -- "$3" "$2"; then ok "$1"; else bad "$1" "no line of $2 matches '$3'"; fi; }
COW=$SCENES/cow.obj
if [ ! -f "$COW" ]; then
    echo "SKIP: $COW missing (set VR_SCENES)"
    exit 77
fi

# the GPU builder's plan in the simulator: reuse as the CPU builder's, three times in the table
expect sim-gpu 0 "^cow\.obj +random +[0-9]+ +5804 +0\.833 +[-0-9.]+ +[0-9.]+ +0\.(7[5-9]|8[0-2])[0-9] +0\.[78][0-9]{2}$" -- "$VREUSE" sim "$COW" --order file,random --cache none --parallel none --limits paper --patch-builder gpu --quiet
cp "$TMP/out" "$TMP/sim.txt"
has sim-gpu-header "$TMP/sim.txt" "^scene +order +tris +reorder +patch-gpu-ref +meshlet +patch-cpu +patch-gpu$"
has sim-gpu-row "$TMP/sim.txt" "^cow\.obj +random +5804 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9.]+|-)$"
has sim-gpu-note "$TMP/sim.txt" "^patch = the GPU builder's plan \(--patch-builder gpu\)"
expect sim-gpu-csv 0 "^cow\.obj,random,2903,5804,17412,patch,256,vertices,[0-9]+,0\.[0-9]+,0\.(7[5-9]|8[0-2])" -- "$VREUSE" sim "$COW" --order random --cache none --parallel none --limits paper --patch-builder gpu --csv - --quiet
# the default and --patch-builder cpu print the same reuse table
expect sim-cpu 0 "^cow\.obj +file " -- "$VREUSE" sim "$COW" --order file --cache none --parallel none --limits paper --quiet
sed '/^preprocessing/,$d' "$TMP/out" > "$TMP/default.txt"
expect sim-cpu-explicit 0 "^cow\.obj +file " -- "$VREUSE" sim "$COW" --order file --cache none --parallel none --limits paper --patch-builder cpu --quiet
sed '/^preprocessing/,$d' "$TMP/out" > "$TMP/explicit.txt"
if cmp -s "$TMP/default.txt" "$TMP/explicit.txt"; then ok sim-cpu-same; else bad sim-cpu-same "--patch-builder cpu changed the output"; fi
expect sim-bad 2 "--patch-builder 'fpga': want one of cpu, gpu" -- "$VREUSE" sim "$COW" --patch-builder fpga
expect sim-help 0 "who builds the patch plan: cpu \(default" -- "$VREUSE" sim --help

# render (CPU twins: the reference's plan) and bench take it
expect render-gpu 0 "^  patch +0 +.* 0\.7[0-9]{3} " -- "$VREUSE" render "$COW" --cpu --strategy patch --batches --order random --size 120x80 --patch-builder gpu -o "$TMP/b.png"
expect render-bad 2 "--patch-builder" -- "$VREUSE" render "$COW" --cpu --patch-builder 3
expect bench-help 0 "--patch-builder cpu[|]gpu" -- "$VREUSE" bench --help
cli_done
