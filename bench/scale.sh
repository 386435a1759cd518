#!/bin/bash
# scale.sh - the bounded streaming pipeline from 1M to 1B triangles (issue 12), the commands
# behind bench/results/scale-h100.md. Per size: the in-core renderer (up to 64M: its queue and
# the host copy of it grow with the scene) and the streamed one (--stream, a 1 GiB queue), the
# geodesic sphere at 1920x1080, naive and hash at the simple load, medians of --reps frames;
# then the host-streamed path on the terrain (row-major vertices: each chunk's vertex window is
# its own rows) against the device's copy rate measured in the same run.
# Usage: bench/scale.sh OUTDIR [SIZES...]   (VREUSE=path/to/vreuse; SCALE_BUDGET=seconds)
set -u
OUT=${1:?usage: bench/scale.sh OUTDIR [SIZES...]}
shift
SIZES=${*:-1M 4M 16M 64M 256M 1000M}
V=${VREUSE:-vreuse}
END=$((SECONDS + ${SCALE_BUDGET:-540}))
mkdir -p "$OUT"
common=(--size 1920x1080 --no-image --reps 5 --load simple)
run() { # name timeout args...
    local name=$1 limit=$2
    shift 2
    local left=$((END - SECONDS))
    [ "$left" -lt 20 ] && { echo "scale.sh: $name skipped (time budget)"; return; }
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name: $V $*"
    /usr/bin/time -f "   $name: %e s wall, %M KB host peak" timeout "$limit" "$V" "$@" \
        > "$OUT/$name.txt" 2>&1
    echo "   $name: rc $?"
    grep -E "streaming|naive|hash|copy rate" "$OUT/$name.txt" | grep -v limits | sed 's/^/   /'
}
for n in $SIZES; do
    case $n in 1M|4M|16M|64M)
        run incore-$n 120 render sphere:$n --strategy naive,hash "${common[@]}" \
            --csv "$OUT/incore-$n.csv" ;;
    esac
    strategies=naive,hash
    [ "$n" = 1000M ] && strategies=naive
    run stream-$n 240 render sphere:$n --stream --strategy $strategies "${common[@]}" \
        --csv "$OUT/stream-$n.csv"
done
run host-terrain-64M 120 render terrain:64M --stream-from host --strategy naive,hash \
    "${common[@]}" --csv "$OUT/host-terrain-64M.csv"
run device-terrain-64M 120 render terrain:64M --stream --strategy naive,hash \
    "${common[@]}" --csv "$OUT/device-terrain-64M.csv"
