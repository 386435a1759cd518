#!/usr/bin/env bash
# bench/frames_ab.sh - full frames of several builds side by side (issue 12's frame rows; the A/B
# tables of bench/results/render-h200.md). Each round runs every build once, in the order given,
# so the builds share the machine's state and drift; medians over the rounds, each round itself
# the median of --reps frames. On a GPU the time is gpu_ms (the frame's CUDA graph, device
# time), else the CPU twins' frame_ms (only the pipeline's behaviour is worth checking there).
#   bench/frames_ab.sh OUTDIR BIN_DIR...   BIN_DIR: a folder holding `vreuse` (or vreuse.xz,
#                                          unpacked first, as tests/stage_device.sh stages it)
# Knobs: AB_ROUNDS (3), AB_REPS (20), AB_SIZE (1920x1080), AB_STRATEGY (hash), AB_ORDER (forsyth),
#        AB_SCENES (every scene in $VR_SCENES, default .device/scenes, then sphere:7M).
# Writes OUTDIR/ab.csv (binary, round, then `vreuse render --csv`'s columns) and prints one line
# per scene: each build's median and its ratio to the first build's, with the rounds' spread.
set -euo pipefail
OUT=${1:?usage: bench/frames_ab.sh OUTDIR BIN_DIR...}
shift
[ $# -ge 1 ] || { echo "usage: bench/frames_ab.sh OUTDIR BIN_DIR..." >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
. bench/ab_lib.sh
ab_scenes sphere:7M
bins=()
for d in "$@"; do
    ab_binary "$d" ""
    bins+=("$d")
done

csv=$OUT/ab.csv
rm -f "$csv"
for ((round = 1; round <= ${AB_ROUNDS:-3}; ++round)); do
    for d in "${bins[@]}"; do
        part=$OUT/ab-part.csv
        if ! "$d/vreuse" render "${scenes[@]}" --order "${AB_ORDER:-forsyth}" \
            --strategy "${AB_STRATEGY:-hash}" --size "${AB_SIZE:-1920x1080}" \
            --reps "${AB_REPS:-20}" --no-image --quiet --csv "$part" > "$OUT/ab.log" 2>&1; then
            echo "frames_ab.sh: $d/vreuse failed in round $round:" >&2
            tail -3 "$OUT/ab.log" >&2
            exit 1
        fi
        [ -f "$csv" ] || echo "binary,round,$(head -1 "$part")" > "$csv"
        tail -n +2 "$part" | sed "s|^|$d,$round,|" >> "$csv"
    done
done
rm -f "$OUT/ab-part.csv"

awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    {
        t = $col["gpu_frame_ms"] + 0
        if (t == 0) t = $col["frame_ms"] + 0
        key = $col["scene"]
        if (!(key in seen)) { seen[key] = 1; order[n++] = key }
        if (!($1 in bseen)) { bseen[$1] = 1; border[nb2++] = $1 }
        v[key, $1, ++cnt[key, $1]] = t
    }
    function median(key, b,    m, i, j, a, x) {
        m = cnt[key, b]
        for (i = 1; i <= m; ++i) a[i] = v[key, b, i]
        for (i = 2; i <= m; ++i) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; --j) a[j + 1] = a[j]; a[j + 1] = x }
        lo[b] = a[1]; hi[b] = a[m]
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
        printf "%-20s", "scene (ms, median)"
        for (i = 0; i < nb2; ++i) printf " %28s", border[i]
        printf "\n"
        for (s = 0; s < n; ++s) {
            key = order[s]
            printf "%-20s", key
            base = median(key, border[0])
            for (i = 0; i < nb2; ++i) {
                m = median(key, border[i])
                printf " %8.4f %5.3fx (%.4f-%.4f)", m, (base > 0 ? m / base : 0), lo[border[i]], hi[border[i]]
            }
            printf "\n"
        }
    }' "$csv"
echo "rows: $csv"
