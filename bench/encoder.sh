#!/usr/bin/env bash
# bench/encoder.sh - the GTS encoder's bytes and speed (issue 12, encoder part), on the CPU.
#   bench/encoder.sh check [VREUSE]      the 88 .gts files of bench/results/encoder-sha256.txt made
#                                        again and compared (every shared scene, foliage:100k,
#                                        terrain:1M, sphere:7M; R and deg.; optimal and greedy;
#                                        with and without vertex data)
#   bench/encoder.sh time [VREUSE] [REPS] median `encode ... ms` of REPS runs (default 5) per scene
#                                        and mode, as `vreuse compress` prints it; one CSV row each
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
*)
    echo "usage: bench/encoder.sh check|time [VREUSE] [REPS]" >&2
    exit 2
    ;;
esac
