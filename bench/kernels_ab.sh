#!/usr/bin/env bash
# bench/kernels_ab.sh - the geometry stage's kernel times (`vreuse bench`) of several variants side
# by side, rounds interleaved: each round runs every variant once, in the order given, so they
# share the machine's state and drift. On the small meshes one run's medians move by 10-20%
# from run to run (bench/NOTES.md, session 40), more than most changes: rank variants over
# rounds, not over one run. A variant is a build, optionally with environment settings:
#   NAME=BIN_DIR[,VAR=VALUE...]   BIN_DIR holds `vreuse` (or vreuse.xz, unpacked first, as
#                                 tests/stage_device.sh stages it)
# e.g. bench/kernels_ab.sh OUT main=.device/main new=.device/bin rounds=.device/bin,VR_PROG_WARP=rounds
# Knobs: AB_ROUNDS (4), AB_REPS (20), AB_LOAD (simple), AB_BLOCK (64), AB_STRATEGY (all),
#        AB_SCENES (the shared scenes in $VR_SCENES, default .device/scenes, then sphere).
# Writes two files (the device tool returns at most 8): OUTDIR/ab.csv (variant, round, then
# `vreuse bench --csv`'s columns) and OUTDIR/ab.txt (printed too): per scene and strategy the
# median ms over the rounds of each variant, its ratio to the first variant's, the rounds' spread;
# then per scene and variant the fastest reuse strategy's median over naive's (issue 12's
# simple-shader target: within 1.15x on the small meshes).
set -euo pipefail
OUT=${1:?usage: bench/kernels_ab.sh OUTDIR NAME=BIN_DIR[,VAR=VALUE...]...}
shift
[ $# -ge 1 ] || { echo "usage: bench/kernels_ab.sh OUTDIR NAME=BIN_DIR[,VAR=VALUE...]..." >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
. bench/ab_lib.sh
ab_scenes sphere
names=() bins=() envs=()
for v in "$@"; do
    name=${v%%=*} rest=${v#*=}
    [ "$name" != "$v" ] && [ -n "$name" ] || { echo "kernels_ab.sh: '$v' is not NAME=BIN_DIR[,VAR=VALUE...]" >&2; exit 2; }
    d=${rest%%,*} env=""
    [ "$d" != "$rest" ] && env=${rest#*,}
    ab_binary "$d" " (variant $name)"
    names+=("$name") bins+=("$d/vreuse") envs+=("$env")
done

csv=$OUT/ab.csv part=$OUT/ab-part.csv log=$OUT/ab-part.log
rm -f "$csv"
for ((round = 1; round <= ${AB_ROUNDS:-4}; ++round)); do
    for i in "${!names[@]}"; do
        settings=()
        [ -n "${envs[$i]}" ] && IFS=, read -r -a settings <<< "${envs[$i]}"
        if ! env ${settings[@]+"${settings[@]}"} "${bins[$i]}" bench "${scenes[@]}" \
            --strategy "${AB_STRATEGY:-all}" --load "${AB_LOAD:-simple}" \
            --block "${AB_BLOCK:-64}" --reps "${AB_REPS:-20}" --quiet --csv "$part" \
            > "$log" 2>&1; then
            echo "kernels_ab.sh: variant ${names[$i]} failed in round $round:" >&2
            tail -3 "$log" >&2
            exit 1
        fi
        [ -f "$csv" ] || echo "variant,round,$(grep -v '^#' "$part" | head -1)" > "$csv"
        grep -v '^#' "$part" | tail -n +2 | sed "s|^|${names[$i]},$round,|" >> "$csv"
    done
done
rm -f "$part" "$log"

awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    $col["status"] != "ok" { bad[$1 " " $col["scene"] " " $col["strategy"]] = $col["status"]; next }
    {
        scene = $col["scene"]; sub(/.*\//, "", scene)
        key = scene SUBSEP $col["strategy"]
        if (!(scene in sseen)) { sseen[scene] = 1; sorder[ns++] = scene }
        if (!($col["strategy"] in tseen)) { tseen[$col["strategy"]] = 1; torder[nt++] = $col["strategy"] }
        if (!($1 in vseen)) { vseen[$1] = 1; vorder[nv++] = $1 }
        v[key, $1, ++cnt[key, $1]] = $col["ms_med"] + 0
    }
    function median(key, b,    m, i, j, a, x) {
        m = cnt[key, b]
        if (m == 0) return -1
        for (i = 1; i <= m; ++i) a[i] = v[key, b, i]
        for (i = 2; i <= m; ++i) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; --j) a[j + 1] = a[j]; a[j + 1] = x }
        lo = a[1]; hi = a[m]
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
        printf "%-20s %-8s", "scene", "strategy"
        for (i = 0; i < nv; ++i) printf " %30s", vorder[i] " ms (x first) [spread]"
        printf "\n"
        for (s = 0; s < ns; ++s)
            for (t = 0; t < nt; ++t) {
                key = sorder[s] SUBSEP torder[t]
                base = median(key, vorder[0])
                if (base < 0) continue
                printf "%-20s %-8s", sorder[s], torder[t]
                for (i = 0; i < nv; ++i) {
                    m = median(key, vorder[i])
                    if (m < 0) { printf " %30s", "-"; continue }
                    printf " %9.4f (%5.3f) [%6.4f-%6.4f]", m, m / base, lo, hi
                }
                printf "\n"
            }
        printf "\nfastest reuse strategy / naive (medians over the rounds)\n%-20s", "scene"
        for (i = 0; i < nv; ++i) printf " %22s", vorder[i]
        printf "\n"
        for (s = 0; s < ns; ++s) {
            printf "%-20s", sorder[s]
            for (i = 0; i < nv; ++i) {
                n = median(sorder[s] SUBSEP "naive", vorder[i])
                best = -1; who = ""
                for (t = 0; t < nt; ++t) {
                    if (torder[t] == "naive" || torder[t] == "multi") continue
                    m = median(sorder[s] SUBSEP torder[t], vorder[i])
                    if (m > 0 && (best < 0 || m < best)) { best = m; who = torder[t] }
                }
                if (n > 0 && best > 0) printf " %14s %7.3f", who, best / n
                else printf " %22s", "-"
            }
            printf "\n"
        }
        for (k in bad) printf "not ok: %s (%s)\n", k, bad[k]
    }' "$csv" | tee "$OUT/ab.txt"
