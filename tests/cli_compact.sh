#!/bin/sh
# cli_compact.sh VREUSE - end-to-end checks of `vreuse bench-compact`: help, usage errors found
# before any device check, outputs checked before the device and never left half-written, the
# no-device message. Run by ctest ("cli-compact"); the GPU run itself is tests/gpu_compact.sh.
. "$(dirname "$0")/cli_lib.sh"

# ---- help -----------------------------------------------------------------------------------
expect compact-help 0 "usage: vreuse bench-compact \[options\]" -- "$VREUSE" bench-compact --help
expect compact-help-method 0 "cub-flagged" -- "$VREUSE" help bench-compact
expect compact-listed 0 "bench-compact +GPU stream compaction" -- "$VREUSE" --help

# ---- usage errors: exit 2 before any device is looked for -----------------------------------
expect compact-select 2 "--select '50,101': '101'.*0\.\.100" -- "$VREUSE" bench-compact --select 50,101
expect compact-size-zero 2 "--sizes '0'.*1\.\.1073741824" -- "$VREUSE" bench-compact --sizes 0
expect compact-size-big 2 "--sizes '2000M'" -- "$VREUSE" bench-compact --sizes 2000M
expect compact-method 2 "unknown 'fast' \(ordered, collate, atomic, hp, hp4, cub-if, cub-flagged, scan, all\)" -- \
    "$VREUSE" bench-compact --method ordered,fast
expect compact-method-twice 2 "--method" -- "$VREUSE" bench-compact --method hp,hp
expect compact-reps 2 "--reps '0'.*1\.\.100000" -- "$VREUSE" bench-compact --reps 0
expect compact-operand 2 "unexpected operand 'sphere'" -- "$VREUSE" bench-compact sphere
expect compact-unknown 2 "unknown option '--threshold'" -- "$VREUSE" bench-compact --threshold 5

# ---- outputs: checked before the device, nothing left behind --------------------------------
expect compact-csv-folder 1 "CSV '$TMP/no/c\.csv'" -- "$VREUSE" bench-compact --csv "$TMP/no/c.csv"
expect compact-two-stdout 1 "another output already goes there" -- "$VREUSE" bench-compact --csv - --md -
echo "old" > "$TMP/keep.csv"
sum_keep=$(md5sum < "$TMP/keep.csv")
expect compact-same-file 1 "two outputs with one name" -- "$VREUSE" bench-compact --csv "$TMP/keep.csv" --md "$TMP/keep.csv"
unchanged compact-same-file-kept "$TMP/keep.csv" "$sum_keep"

# ---- no device: a clear message and exit 1, the old CSV untouched ---------------------------
if nvidia-smi -L > /dev/null 2>&1; then
    echo "SKIP cli/compact-no-device: a GPU is present"
else
    expect compact-no-device 1 "vreuse bench-compact: no CUDA device.*needs a CUDA build and device" -- \
        "$VREUSE" bench-compact --sizes 1k --csv "$TMP/keep.csv"
    unchanged compact-no-device-kept "$TMP/keep.csv" "$sum_keep"
    expect compact-no-device-no-temp 0 "^keep\.csv$" -- ls "$TMP"
fi
cli_done
