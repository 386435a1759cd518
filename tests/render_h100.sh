#!/bin/bash
# render_h100.sh OUTDIR - the OpenGL hardware reference and per-stage frame timing on the H100
# (numbers for bench/results/render-h100.md). For every staged scene and sphere:7M, in forsyth and
# file order: `vreuse_glref` (GL_VERTEX_SHADER_INVOCATIONS, GL_TIME_ELAPSED) -> OUTDIR/gl.csv and
# `vreuse render --strategy hash --reps 20` (naive,warp,hash for sphere:7M) -> OUTDIR/frame.csv
# (joined from one CSV per call), at 1920x1080 with the simple shader; then bunny images
# (shaded, heatmaps, the GL frame) and a summary table LAST. Stage first with
# tests/stage_device.sh (it stages vreuse_glref too). Knobs:
# RENDER_TIME_BUDGET=seconds (default 230), RENDER_REPS (default 20), RENDER_BIN (default
# .device/bin), RENDER_BIG (default sphere:7M; a smaller one for a CPU dry run).
. "$(dirname "$0")/device_lib.sh"  # OUTDIR, cd to the root, record, limit, device_setup
BIN=${RENDER_BIN:-$PWD/.device/bin}
BIG=${RENDER_BIG:-sphere:7M}
SCENES_DIR=$PWD/.device/scenes
REPS=${RENDER_REPS:-20}
SIZE=1920x1080
DEADLINE=$((SECONDS + ${RENDER_TIME_BUDGET:-230}))
LIMIT_RESERVE=5

# step NAME CAP LOG CMD...: runs CMD under timeout, tees to OUTDIR/LOG, records the outcome
step() {
    local name=$1 cap t0=$SECONDS log=$OUTDIR/$3
    cap=$(limit "$2")
    shift 3
    if [ "$cap" -le 0 ]; then
        record "$name" skip 0 "time budget spent"
        return 1
    fi
    echo "== $name: $*"
    timeout "$cap" "$@" 2>&1 | tee "$log"
    local rc=$?
    case $rc in
        0) record "$name" ok $((SECONDS - t0)) "$(basename "$log")" ;;
        124) record "$name" FAIL $((SECONDS - t0)) "timed out after ${cap}s" ;;
        *) record "$name" FAIL $((SECONDS - t0)) "exit $rc (see $(basename "$log"))" ;;
    esac
    return $rc
}

# ---- runtime libraries, device, EGL vendor ----------------------------------------------------
t0=$SECONDS
device_setup
for b in vreuse vreuse_glref; do
    if [ ! -x "$BIN/$b" ]; then
        echo "render_h100.sh: $BIN/$b missing. Hint: run tests/stage_device.sh first"
        record setup FAIL $((SECONDS - t0)) "$b not staged"
    elif ldd "$BIN/$b" | grep "not found"; then
        record setup FAIL $((SECONDS - t0)) "$b: missing libraries (see above)"
    fi
done
# glvnd finds NVIDIA's EGL vendor through its JSON file; point at it when the default search fails
if ! "$BIN/vreuse_glref" sphere:1k --order file --reps 1 --quiet > "$OUTDIR/egl_probe.log" 2>&1; then
    for j in /usr/share/glvnd/egl_vendor.d/10_nvidia.json \
             /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
             /etc/glvnd/egl_vendor.d/10_nvidia.json; do
        if [ -f "$j" ]; then
            export __EGL_VENDOR_LIBRARY_FILENAMES=$j
            break
        fi
    done
    "$BIN/vreuse_glref" sphere:1k --order file --reps 1 --quiet >> "$OUTDIR/egl_probe.log" 2>&1 ||
        { cat "$OUTDIR/egl_probe.log"; record egl FAIL $((SECONDS - t0)) \
          "no EGL/GL context (vendor file: ${__EGL_VENDOR_LIBRARY_FILENAMES:-default})"; }
fi
GL_LINE=$(grep -m1 '^vreuse_glref:' "$OUTDIR/egl_probe.log" | tail -1)
echo "gl: $GL_LINE"
record setup ok $((SECONDS - t0)) "${GPU_LINE}; EGL vendor ${__EGL_VENDOR_LIBRARY_FILENAMES:-default}"

# every staged scene, then the 7M sphere (generated)
SCENES=()
for f in "$SCENES_DIR"/*; do
    case $f in *.obj | *.ply | *.gltf | *.glb | *.fbx) SCENES+=("$f") ;; esac
done
BUNNY=$SCENES_DIR/stanford-bunny.obj
rm -f "$OUTDIR/gl.csv" "$OUTDIR/frame.csv" "$OUTDIR"/frame-*.csv

# ---- OpenGL reference: one context, every scene, both orders ---------------------------------
step glref 90 gl.log "$BIN/vreuse_glref" "${SCENES[@]}" "$BIG" --order forsyth,file \
    --size $SIZE --reps "$REPS" --csv "$OUTDIR/gl.csv" --quiet

# ---- frame timing: hash on every scene; naive, warp, hash on the 7M sphere --------------------
# (each call writes its own CSV, complete or not at all; frame.csv joins them under one header)
for order in forsyth file; do
    step "frame-$order" 45 "frame-$order.log" "$BIN/vreuse" render "${SCENES[@]}" --order "$order" \
        --strategy hash --size $SIZE --reps "$REPS" --csv "$OUTDIR/frame-scenes-$order.csv" \
        --no-image --quiet --graph off
    step "frameBig-$order" 50 "frameBig-$order.log" "$BIN/vreuse" render "$BIG" --order "$order" \
        --strategy naive,warp,hash --size $SIZE --reps "$REPS" --csv "$OUTDIR/frame-big-$order.csv" \
        --no-image --quiet --graph off
    # the same frames as one CUDA graph each (the default): the device's frame time, no stages
    step "frameGraph-$order" 45 "frameGraph-$order.log" "$BIN/vreuse" render "${SCENES[@]}" "$BIG" \
        --order "$order" --strategy hash --size $SIZE --reps "$REPS" \
        --csv "$OUTDIR/graph-$order.csv" --no-image --quiet --graph on
done
GRAPH_PARTS=()
for f in "$OUTDIR"/graph-forsyth.csv "$OUTDIR"/graph-file.csv; do
    [ -f "$f" ] && GRAPH_PARTS+=("$f")
done
if [ ${#GRAPH_PARTS[@]} -gt 0 ]; then
    awk 'FNR == 1 && NR != 1 { next } { print }' "${GRAPH_PARTS[@]}" > "$OUTDIR/graph.csv"
fi
FRAME_PARTS=()
for f in "$OUTDIR"/frame-scenes-forsyth.csv "$OUTDIR"/frame-big-forsyth.csv \
         "$OUTDIR"/frame-scenes-file.csv "$OUTDIR"/frame-big-file.csv; do
    [ -f "$f" ] && FRAME_PARTS+=("$f")
done
if [ ${#FRAME_PARTS[@]} -gt 0 ]; then
    awk 'FNR == 1 && NR != 1 { next } { print }' "${FRAME_PARTS[@]}" > "$OUTDIR/frame.csv"
fi

# ---- bunny images: shaded, heatmaps (file and forsyth order), the GL frame --------------------
if [ -f "$BUNNY" ]; then
    step img-shaded 20 img-shaded.log "$BIN/vreuse" render "$BUNNY" --order forsyth \
        --strategy hash --size $SIZE --out "$OUTDIR/bunny-shaded.png" --quiet
    for order in forsyth file; do
        step "img-heat-$order" 20 "img-heat-$order.log" "$BIN/vreuse" render "$BUNNY" \
            --order "$order" --strategy naive,warp,hash --heatmap --size 1280x720 \
            --out "$OUTDIR/bunny-heatmap-$order.png" --quiet
    done
    step img-batches 20 img-batches.log "$BIN/vreuse" render "$BUNNY" --order forsyth \
        --strategy warp,hash --batches --size 1280x720 --out "$OUTDIR/bunny-batches.png" --quiet
    step img-gl 20 img-gl.log "$BIN/vreuse_glref" "$BUNNY" --order forsyth --size $SIZE --reps 1 \
        --png "$OUTDIR/gl-" --quiet
else
    record images skip 0 "$BUNNY missing"
fi

# ---- summary, last: hardware reuse and draw time next to the hash strategy's frame ------------
echo
echo "== render_h100.sh summary ($GPU_LINE; $SIZE; medians of $REPS; files in $OUTDIR)"
if [ -f "$OUTDIR/gl.csv" ] && [ -f "$OUTDIR/frame.csv" ]; then
    awk -F, '
        FNR == 1 { file++ }
        /^#/ || $1 == "scene" { next }
        file == 1 { key = $1 "," $2; gl_reuse[key] = $6; gl_ms[key] = $7; tris[key] = $3;
                    if (!(key in seen)) { seen[key] = 1; keys[n++] = key } }
        file == 2 { key = $1 "," $2; s = $4
                    reuse[key, s] = $13; geo[key, s] = $8; ras[key, s] = $9; res[key, s] = $10;
                    frm[key, s] = $11 }
        END {
            printf "%-20s %-8s %9s %8s %8s | %-6s %8s %8s %8s %8s %8s\n", "scene", "order",
                   "tris", "gl_reuse", "gl_ms", "strat", "reuse", "geom_ms", "rast_ms",
                   "resol_ms", "frame_ms"
            for (i = 0; i < n; i++) {
                k = keys[i]; split(k, p, ",")
                split("naive warp hash", ss, " ")
                first = 1
                for (j = 1; j <= 3; j++) {
                    s = ss[j]
                    if (!((k, s) in frm)) continue
                    if (first)
                        printf "%-20s %-8s %9s %8.4f %8.3f | ", p[1], p[2], tris[k],
                               gl_reuse[k], gl_ms[k]
                    else
                        printf "%-20s %-8s %9s %8s %8s | ", "", "", "", "", ""
                    printf "%-6s %8.4f %8.3f %8.3f %8.3f %8.3f\n", s, reuse[k, s], geo[k, s],
                           ras[k, s], res[k, s], frm[k, s]
                    first = 0
                }
                if (first)
                    printf "%-20s %-8s %9s %8.4f %8.3f | (no frame row)\n", p[1], p[2], tris[k],
                           gl_reuse[k], gl_ms[k]
            }
        }' "$OUTDIR/gl.csv" "$OUTDIR/frame.csv" | tee "$OUTDIR/summary_table.txt"
else
    echo "(gl.csv or frame.csv missing: see the step logs)"
fi
# the device's own frame time (cudaEvents around the frame's device work, hash): stage by stage
# (host waits between the stages) and as one CUDA graph, against GL_TIME_ELAPSED of one draw
if [ -f "$OUTDIR/gl.csv" ] && [ -f "$OUTDIR/frame.csv" ] && [ -f "$OUTDIR/graph.csv" ]; then
    echo
    awk -F, '
        FNR == 1 { file++ }
        /^#/ || $1 == "scene" { next }
        file == 1 { key = $1 "," $2; gl_ms[key] = $7; if (!(key in seen)) { seen[key] = 1; keys[n++] = key } }
        file == 2 && $4 == "hash" { plain[$1 "," $2] = $26 }
        file == 3 && $4 == "hash" { graph[$1 "," $2] = $26 }
        END {
            printf "%-20s %-8s %8s %10s %10s %9s\n", "scene", "order", "gl_ms", "plain_gpu",
                   "graph_gpu", "graph/gl"
            for (i = 0; i < n; i++) {
                k = keys[i]; split(k, p, ",")
                if (!(k in graph)) continue
                printf "%-20s %-8s %8.3f %10.3f %10.3f %9.2f\n", p[1], p[2], gl_ms[k], plain[k],
                       graph[k], graph[k] / gl_ms[k]
            }
        }' "$OUTDIR/gl.csv" "$OUTDIR/frame.csv" "$OUTDIR/graph.csv" | tee "$OUTDIR/graph_table.txt"
fi
echo
summary_exit
