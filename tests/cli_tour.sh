#!/bin/sh
# cli_tour.sh VREUSE - end-to-end checks of `vreuse tour` (and bare `vreuse`), `vreuse compress`
# and main's command table (--help, help CMD). Run by ctest ("cli-tour").
. "$(dirname "$0")/cli_lib.sh"

# the tour: every strategy with its = sim check, which clock timed it, a PNG, and fast on the
# CPU path (the brief's budget: under 5 s on two cores)
expect tour 0 "times: (CPU twins \(no CUDA device|GPU kernels on)" -- "$VREUSE" tour --out "$TMP/t.png"
cp "$TMP/out" "$TMP/tour.txt"
# has NAME PATTERN: the tour's output has a line matching PATTERN
has() { if grep -Eq -- "$2" "$TMP/tour.txt"; then ok "$1"; else bad "$1" "no line matches '$2'"; fi; }
for s in naive warp hash phash sort multi; do
    has "tour-row-$s" "^sphere +forsyth +$s +[a-z]+ +[0-9,]+ .* = sim "
done
has tour-ideal "^sphere +forsyth +ideal .* 0\.833"
has tour-next "^  vreuse compress sphere -o sphere\.gts"
png_magic() { head -c 8 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n'; }
if [ "$(png_magic "$TMP/t.png")" = 89504e470d0a1a0a ]; then ok tour-png; else bad tour-png "$TMP/t.png is no PNG"; fi

t0=$(date +%s%N)
expect tour-cpu 0 "times: CPU twins \(--cpu\)" -- "$VREUSE" tour --cpu --out "$TMP/c.png" --quiet
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ "$ms" -lt 5000 ]; then ok "tour-cpu-time ($ms ms)"; else bad tour-cpu-time "took $ms ms (budget 5000)"; fi

# bare vreuse is the tour on the default scene; its PNG lands in the current folder (run from
# $TMP, so nothing is left in the build or source tree)
case "$VREUSE" in /*) ;; */*) VREUSE=$PWD/$VREUSE ;; esac
expect bare 0 "^sphere +forsyth +multi .*0\.833" -- sh -c "cd \"$TMP\" && \"$VREUSE\""
if [ "$(png_magic "$TMP/vreuse-tour.png")" = 89504e470d0a1a0a ]; then ok bare-png; else bad bare-png "no vreuse-tour.png in the current folder"; fi
expect tour-orders 0 "^sphere:2k +random +hash" -- "$VREUSE" tour sphere:2k --order file,random --size 64x48 --out "$TMP/o.png" --quiet
expect tour-two-scenes 2 "one scene at a time" -- "$VREUSE" tour sphere:1k sphere:2k
expect tour-bad-size 2 "--size '0x9'" -- "$VREUSE" tour --size 0x9
expect tour-missing 1 "nope\.obj" -- "$VREUSE" tour "$TMP/nope.obj"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/tri.obj"
sum=$(md5sum < "$TMP/tri.obj")
expect tour-out-is-input 1 "is the input" -- "$VREUSE" tour "$TMP/tri.obj" --out "$TMP/tri.obj" --quiet
unchanged tour-out-is-input-kept "$TMP/tri.obj" "$sum"

# compress: never over its input, a failed write fails, one file needs one restart mode
expect compress-out-is-input 1 "is the input" -- "$VREUSE" compress "$TMP/tri.obj" -o "$TMP/tri.obj" --quiet
unchanged compress-out-is-input-kept "$TMP/tri.obj" "$sum"
if [ -c /dev/full ] && [ -w /dev/full ]; then
    expect compress-full 1 "/dev/full: write failed" -- "$VREUSE" compress sphere:1k -o /dev/full --quiet
fi
echo old > "$TMP/keep.gts"
sum=$(md5sum < "$TMP/keep.gts")
expect compress-bad-scene 1 "nope\.obj" -- "$VREUSE" compress "$TMP/nope.obj" -o "$TMP/keep.gts"
unchanged compress-bad-scene-kept "$TMP/keep.gts" "$sum"
expect compress-two-modes 2 "-o writes one file" -- "$VREUSE" compress sphere:1k --restart r,deg -o "$TMP/x.gts"
expect compress-all-modes 0 "restarts as degenerate" -- "$VREUSE" compress sphere:1k --restart all --quiet
expect compress-bad-restart 2 "--restart 'sideways'" -- "$VREUSE" compress sphere:1k --restart sideways
expect compress-reps 2 "--reps '0'" -- "$VREUSE" compress sphere:1k --reps 0
expect compress-written 0 "wrote .*r\.gts" -- "$VREUSE" compress sphere:1k --restart r -o "$TMP/r.gts" --quiet
expect compress-readback 0 "triangles" -- "$VREUSE" info "$TMP/r.gts"
left=$(ls -A "$TMP" | grep -c '\.vreuse-')
if [ "$left" -eq 0 ]; then ok no-temporaries; else bad no-temporaries "$left temporary files left in $TMP"; fi

# the command table: --help lists every command, help CMD is CMD --help
"$VREUSE" --help > "$TMP/help" 2>&1
for c in tour info sim bench compress bench-gts render plot-bench; do
    if grep -Eq "^  $c " "$TMP/help"; then ok "help-lists-$c"; else bad "help-lists-$c" "not in vreuse --help"; fi
done
expect help-sim 0 "usage: vreuse sim" -- "$VREUSE" help sim
expect help-tour 0 "usage: vreuse tour \[SCENE\]" -- "$VREUSE" help tour
expect help-unknown 2 "unknown command 'frobnicate'" -- "$VREUSE" help frobnicate

cli_done
