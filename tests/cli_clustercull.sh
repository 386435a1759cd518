#!/bin/sh
# cli_clustercull.sh VREUSE - end-to-end checks of `bench --cluster-cull` (cluster culling of the
# static plans, reuse/cluster_cull.h; issue 14): the option is in the help, where it can do
# nothing it is a usage error naming what is missing (culling, a plan strategy), a bad value is a
# usage error, and a good command line gets as far as the device check (no GPU here). The
# results themselves: `vreuse_tests reuse/clustercull` (CPU) and `gpu/clustercull` (GPU).
# Run by ctest ("cli-clustercull").
. "$(dirname "$0")/cli_lib.sh"

expect help 0 "--cluster-cull LIST" -- "$VREUSE" bench --help
expect no-cull 2 "--cluster-cull on .* needs --cull" -- "$VREUSE" bench sphere --strategy patch --cluster-cull on
expect cull-off 2 "needs --cull" -- "$VREUSE" bench sphere --strategy patch --cull off --cluster-cull off,on
expect no-plan 2 "static plans only: add patch or meshlet" -- "$VREUSE" bench sphere --strategy hash,naive --cull ink --cluster-cull on
expect bad-value 2 "--cluster-cull 'yes': unknown 'yes' \(off, on, all\)" -- "$VREUSE" bench sphere --strategy patch --cull ink --cluster-cull yes
expect queue-write 2 "no --cluster-cull" -- "$VREUSE" bench sphere --strategy patch --cull ink --cluster-cull on --queue-write
# off alone needs nothing; a good combination reaches the device (or runs, on a GPU)
if "$VREUSE" bench sphere:1k --strategy patch,hash --cull ink --cluster-cull all --reps 1 --load simple > "$TMP/out" 2>&1; then
    if grep -Eq "^ *sphere:1k +forsyth +[0-9]+ +patch .* ok +on$" "$TMP/out"; then ok gpu-run; else bad gpu-run "no patch row with cluster_cull on"; fi
else
    if grep -q "no CUDA device" "$TMP/out"; then ok no-device; else bad no-device "$(head -3 "$TMP/out")"; fi
fi
cli_done
