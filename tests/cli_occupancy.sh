#!/bin/sh
# cli_occupancy.sh VREUSE - end-to-end checks of the occupancy-aware batch limits (issue 12):
# --limits auto (the default) and paper, --sms, explicit options winning, the limits in sim's
# table, CSV and JSON and in render's output, render's CPU twin shading what sim counts for the
# same limits, and refused values. Run by ctest ("cli-occupancy").
. "$(dirname "$0")/cli_lib.sh"
COW=$SCENES/cow.obj
if [ ! -f "$COW" ]; then
    echo "SKIP: $COW missing (set VR_SCENES)"
    exit 77
fi
SIM="--cache none --parallel none --quiet"

# the options, in every command that chooses limits
expect sim-help 0 "^ +--limits paper\|auto$" -- "$VREUSE" sim --help
expect sim-help-sms 0 "H100\) \[1\.\.4096\]$" -- "$VREUSE" sim --help
expect render-help 0 "H100\) \[1\.\.4096\]$" -- "$VREUSE" render --help
expect bench-help 0 "--limits paper\|auto" -- "$VREUSE" bench --help

# paper is the default; auto: a 5.8k-triangle mesh gets the floor on an H100, N_u 128 on 2 SMs; paper: the paper's
# shellcheck disable=SC2086
expect sim-auto 0 "^  cow\.obj forsyth: warp batch 96, N_u 64, <= 255 indices$" -- \
    "$VREUSE" sim "$COW" --limits auto $SIM
# shellcheck disable=SC2086
expect sim-auto-sms 0 "^  cow\.obj forsyth: warp batch 96, N_u 128, <= 510 indices$" -- \
    "$VREUSE" sim "$COW" --limits auto --sms 2 $SIM
# shellcheck disable=SC2086
expect sim-paper 0 "^dyn: dynamic batches of <= 256 distinct vertices and <= 1023 indices" -- \
    "$VREUSE" sim "$COW" --limits paper $SIM
# shellcheck disable=SC2086
expect sim-given-wins 0 "^  cow\.obj forsyth: warp batch 96, N_u 100, <= 255 indices$" -- \
    "$VREUSE" sim "$COW" --limits auto --nu 100 $SIM
# shellcheck disable=SC2086
expect sim-auto-csv 0 "^# limits: cow\.obj file: warp batch 96, N_u 64, <= 255 indices$" -- \
    "$VREUSE" sim "$COW" --limits auto --order file,forsyth --csv - $SIM
# shellcheck disable=SC2086
expect sim-auto-csv-rows 0 "^cow\.obj,forsyth,2903,5804,17412,hash,64,vertices," -- \
    "$VREUSE" sim "$COW" --limits auto --csv - $SIM
# shellcheck disable=SC2086
expect sim-auto-json 0 "\"order_seconds\": [0-9.]+, \"warp_batch\": 96, \"dyn_max_unique\": 64, \"dyn_max_indices\": 255" -- \
    "$VREUSE" sim "$COW" --limits auto --json - $SIM

# render: the limits of every panel, and the CPU twin shades what sim counts (file order)
expect render-auto 0 "limits auto \(132 SMs\): hash block 64, N_u 64, <= 255 indices; naive block 64; warp block 64, batch 96" -- \
    "$VREUSE" render "$COW" --cpu --limits auto --strategy hash,naive,warp --size 32x32 -o "$TMP/a.png"
expect render-paper 0 "limits paper: hash block 256, N_u 256, <= 1023 indices" -- \
    "$VREUSE" render "$COW" --cpu --limits paper --size 32x32 -o "$TMP/p.png"
expect render-default-paper 0 "limits paper: hash block 256, N_u 256, <= 1023 indices" -- \
    "$VREUSE" render "$COW" --cpu --size 32x32 -o "$TMP/d.png"
for sms in 132 2; do
    "$VREUSE" render "$COW" --cpu --limits auto --sms $sms --strategy hash --size 32x32 -o "$TMP/s.png" \
        > "$TMP/render.txt" 2>&1
    r=$(awk '$1 == "strategy" { for (i = 1; i <= NF; i++) if ($i == "invocations") c = i }
        $1 == "hash" && $2 == "0" { print $c }' "$TMP/render.txt")
    # shellcheck disable=SC2086
    s=$("$VREUSE" sim "$COW" --limits auto --order file --sms $sms --csv - $SIM |
        awk -F, '$6 == "hash" { print $9 }')
    if [ -n "$r" ] && [ "$r" = "$s" ]; then
        ok "render-equals-sim-$sms ($r invocations)"
    else
        bad "render-equals-sim-$sms" "render '$r', sim '$s'"
    fi
done

# refused values name the option and what is accepted
expect limits-bad 2 "--limits 'fast'.*paper, auto" -- "$VREUSE" sim "$COW" --limits fast
expect sms-zero 2 "--sms '0'.*1\.\.4096" -- "$VREUSE" sim "$COW" --sms 0
expect sms-big 2 "--sms '5000'" -- "$VREUSE" render "$COW" --cpu --sms 5000
expect bench-limits-bad 2 "--limits 'x'" -- "$VREUSE" bench "$COW" --limits x
cli_done
