#!/bin/bash
# same_results.sh OLD_BIN NEW_BIN OUTDIR - a refactor keeps results bit for bit: runs the same
# deterministic commands with two builds (folders holding vreuse; on the H100 they take the GPU
# path) and compares their outputs byte by byte: PNGs of every strategy and shading mode (geometry
# stage + rasterizer + resolve), compressed files, simulator CSVs and invocation counts. Prints
# one line per output and "N passed, M failed" last. Scenes from $VR_SCENES (default
# .device/scenes). Only options both builds accept are used.
set -u
OLD=${1:?usage: tests/same_results.sh OLD_BIN NEW_BIN OUTDIR}
NEW=${2:?usage}
OUT=${3:?usage}
cd "$(dirname "$0")/.." || exit 1
SCENES=${VR_SCENES:-$PWD/.device/scenes}
mkdir -p "$OUT/old" "$OUT/new"
pass=0 fail=0
NEW_LIMITS=
"$NEW/vreuse" render --help 2>&1 | grep -q -- '--limits' && NEW_LIMITS="--limits paper"
# the strategies both builds have (a later build's new ones would change --strategy all's mosaic)
STRATEGIES=${VR_STRATEGIES:-naive,warp,hash,phash,sort,multi}

# run NAME ARGS...: runs `vreuse ARGS` with both builds; {OUT} in ARGS becomes each side's folder
run() {
    local name=$1
    shift
    for side in old new; do
        local bin=$OLD
        [ $side = new ] && bin=$NEW
        local args=("${@//\{OUT\}/$OUT/$side}")
        # a build with occupancy-aware limits compares at the paper's fixed ones
        [ $side = new ] && [ -n "$NEW_LIMITS" ] && case $1 in render | sim) args+=($NEW_LIMITS) ;; esac
        "$bin/vreuse" "${args[@]}" > "$OUT/$side/$name.log" 2>&1 || echo "$side: exit $? ($name)" >> "$OUT/$side/$name.log"
    done
}

# same FILE: FILE (relative to each side's folder) must exist and be identical on both sides
same() {
    if [ -s "$OUT/old/$1" ] && cmp -s "$OUT/old/$1" "$OUT/new/$1"; then
        echo "OK   same/$1"
        pass=$((pass + 1))
    else
        echo "FAIL same/$1 differs or is missing"
        fail=$((fail + 1))
    fi
}

for s in stanford-bunny.obj cow.obj igea.ply teapot.obj; do
    for mode in "" --heatmap --batches; do
        tag=${s%%.*}${mode:+-${mode#--}}
        run "render-$tag" render "$SCENES/$s" --strategy "$STRATEGIES" $mode --order forsyth \
            --size 640x360 --out "{OUT}/render-$tag.png" --quiet
        same "render-$tag.png"
    done
done
run render-sphere render sphere:2M --strategy naive,warp,hash,sort --heatmap --size 960x540 \
    --out "{OUT}/render-sphere.png" --quiet
same render-sphere.png
run render-cull render "$SCENES/horse.ply" --strategy hash,phash --cull --yaw 40 --pitch 20 \
    --zoom 1.4 --size 800x600 --out "{OUT}/render-cull.png" --quiet
same render-cull.png
for s in horse.ply fandisk.obj; do
    run "gts-$s" compress "$SCENES/$s" -o "{OUT}/$s.gts" --quiet
    same "$s.gts"
done
run sim sim "$SCENES/stanford-bunny.obj" "$SCENES/igea.ply" --order file,forsyth,random \
    --csv "{OUT}/sim.csv" --quiet
# the rows and notes of strategies the old build lacks (patch, meshlet) are left out
for side in old new; do
    [ -f "$OUT/$side/sim.csv" ] &&
        grep -v '^# patch/meshlet' "$OUT/$side/sim.csv" |
        awk -F, '$6 != "patch" && $6 != "meshlet"' > "$OUT/$side/sim-common.csv"
done
same sim-common.csv
# invocation counts (and every other count) of the GPU frames: the render tables minus times
for side in old new; do
    for f in "$OUT/$side"/render-*.log; do
        # columns by name: the table gained columns over time (gpu_ms, a graph frame's "-")
        awk '$1 == "strategy" { for (i = 1; i <= NF; i++) c[$i] = i }
             /^  [a-z]+ +[0-9]+ / { print $1, $2, $c["invocations"], $c["shd/tri"],
                                    $c["reuse"], $c["batches"], $c["fragments"],
                                    $c["clipped"] }' "$f"
    done > "$OUT/$side/counts.txt"
done
same counts.txt
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
