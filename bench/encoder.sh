#!/usr/bin/env bash
# bench/encoder.sh - the GTS encoder's bytes and speed (issue 12, encoder part), on the CPU.
#   bench/encoder.sh check [VREUSE]      the 88 .gts files of bench/results/encoder-sha256.txt made
#                                        again and compared (every shared scene, foliage:100k,
#                                        terrain:1M, sphere:7M; R and deg.; optimal and greedy;
#                                        with and without vertex data)
#   bench/encoder.sh time [VREUSE] [REPS] median `encode ... ms` of REPS runs (default 5) per scene
#                                        and mode, as `vreuse compress` prints it; one CSV row each
#   bench/encoder.sh ab BEFORE AFTER [REPS]  two builds interleaved (REPS runs each, default 7) on
#                                        sphere:7M, igea, bunny and horse, R and deg.: one CSV row per
#                                        run with the process's user and system seconds (the A/B
#                                        tables of bench/results/encoder.md; this VM's times drift,
#                                        so only runs side by side compare)
# VREUSE defaults to ./build/vreuse. Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-check}
bin=${2:-./build/vreuse}
scenes=(../shared/scenes/*.obj ../shared/scenes/*.ply foliage:100k terrain:1M sphere:7M)

case "$what" in
check)
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    for sc in "${scenes[@]}"; do
        name=$(basename "$sc" | tr ':' '_')
        for mode in r deg; do
            for pack in opt greedy; do
                for vd in vd novd; do
                    args=(--restart "$mode" --quiet -o "$dir/$name-$mode-$pack-$vd.gts")
                    [ "$pack" = greedy ] && args+=(--greedy)
                    [ "$vd" = novd ] && args+=(--no-vertex-data)
                    "$bin" compress "$sc" "${args[@]}" >/dev/null
                done
            done
        done
    done
    (cd "$dir" && grep -v '^#' "$OLDPWD/bench/results/encoder-sha256.txt" | sha256sum -c --quiet) &&
        echo "encoder check: $(grep -vc '^#' bench/results/encoder-sha256.txt) files identical"
    ;;
time)
    reps=${3:-5}
    echo "scene,triangles,mode,median_ms,mtri_per_s,runs_ms"
    for sc in "${scenes[@]}"; do
        for mode in r deg; do
            runs=()
            for ((i = 0; i < reps; ++i)); do
                out=$("$bin" compress "$sc" --restart "$mode" --quiet)
                runs+=("$(sed -n 's/^ *encode *\([0-9.]*\) ms.*/\1/p' <<<"$out")")
                tris=$(sed -n 's/^ *triangles *\([0-9,]*\) source.*/\1/p' <<<"$out" | tr -d ,)
            done
            med=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(((reps + 1) / 2))p")
            echo "$(basename "$sc"),$tris,$mode,$med,$(awk -v t="$tris" -v m="$med" \
                'BEGIN { printf "%.2f", t / m / 1000 }'),$(IFS=' '; echo "${runs[*]}")"
        done
    done
    ;;
ab)
    [ $# -ge 3 ] || { echo "usage: bench/encoder.sh ab BEFORE AFTER [REPS]" >&2; exit 2; }
    before=$2 after=$3 reps=${4:-7}
    out=$(mktemp)
    trap 'rm -f "$out" "$out.t"' EXIT
    echo "scene,triangles,mode,build,rep,encode_ms,process_user_s,process_sys_s"
    for sc in sphere:7M ../shared/scenes/igea.ply ../shared/scenes/stanford-bunny.obj \
              ../shared/scenes/horse.ply; do
        for mode in r deg; do
            for ((i = 0; i < reps; ++i)); do
                for b in before after; do
                    exe=$before
                    [ "$b" = after ] && exe=$after
                    /usr/bin/time -f "%U %S" -o "$out.t" "$exe" compress "$sc" --restart "$mode" \
                        --quiet > "$out"
                    ms=$(sed -n 's/^ *encode *\([0-9.]*\) ms.*/\1/p' "$out")
                    tris=$(sed -n 's/^ *triangles *\([0-9,]*\) source.*/\1/p' "$out" | tr -d ,)
                    echo "$(basename "$sc"),$tris,$mode,$b,$i,$ms,$(tr ' ' ',' < "$out.t")"
                done
            done
        done
    done
    ;;
*)
    echo "usage: bench/encoder.sh check|time [VREUSE] [REPS] | ab BEFORE AFTER [REPS]" >&2
    exit 2
    ;;
esac
