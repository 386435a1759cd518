#!/bin/sh
# cli_figures.sh VREUSE - end-to-end checks of the figures (pipeline/svg.c through
# `sim --plot` and `plot-bench`) and of the simulator's OpenMP job spreading: complete
# documents, escaped names, failed writes that fail the command and delete no device node, and
# reports that do not depend on --threads. Run by ctest ("cli-figures").
. "$(dirname "$0")/cli_lib.sh"

# sim --plot: one complete document per scene and order
expect sim-plot 0 "sphere:5k" -- "$VREUSE" sim sphere:5k --order forsyth --plot "$TMP/s.svg" --quiet
expect sim-plot-complete 0 "^</svg>$" -- tail -n 1 "$TMP/s.svg"
expect sim-plot-title 0 "sphere:5k .* forsyth order</text>" -- cat "$TMP/s.svg"

# plot-bench: names escaped, invalid UTF-8 and control bytes as '?'
printf 'scene,strategy,load,ms_med,bound\na<&>\377,naive,simple,2.0,1\na<&>\377,warp,simple,1.0,3\n' > "$TMP/b.csv"
expect plot-bench 0 "wrote" -- "$VREUSE" plot-bench "$TMP/b.csv" --out "$TMP/f.svg" --title 'T "1"'
expect plot-bench-escaped 0 "a&lt;&amp;&gt;\?" -- cat "$TMP/f.svg"
expect plot-bench-title 0 "T &quot;1&quot;</text>" -- cat "$TMP/f.svg"
expect plot-bench-complete 0 "^</svg>$" -- tail -n 1 "$TMP/f.svg"

# a failed write fails the command and names the output; what the output path names is not
# deleted unless it is a regular file (through a link, so a regression cannot hit /dev/full)
if [ -w /dev/full ] && [ -c /dev/full ]; then
    ln -s /dev/full "$TMP/full.svg"
    expect plot-bench-full 1 "writing '.*full\.svg' failed" -- \
        "$VREUSE" plot-bench "$TMP/b.csv" --out "$TMP/full.svg" --quiet
    if [ -c "$TMP/full.svg" ]; then ok plot-bench-full-kept; else bad plot-bench-full-kept "full.svg was removed"; fi
    expect sim-plot-full 1 "writing .*failed" -- "$VREUSE" sim sphere:1k --plot "$TMP/full.svg" --quiet
fi

# the report does not depend on the thread count (jobs own their scratch)
for t in 1 2 16; do
    "$VREUSE" sim sphere:20k --order random,forsyth --assign both --threads $t --csv "$TMP/t$t.csv" \
        --quiet > /dev/null 2>&1
done
"$VREUSE" sim sphere:20k --order random,forsyth --assign both --csv "$TMP/t0.csv" --quiet > /dev/null 2>&1
if [ -s "$TMP/t1.csv" ] && cmp -s "$TMP/t1.csv" "$TMP/t2.csv" && cmp -s "$TMP/t1.csv" "$TMP/t16.csv" &&
    cmp -s "$TMP/t1.csv" "$TMP/t0.csv"; then
    ok sim-threads-same-report
else
    bad sim-threads-same-report "CSV differs between --threads 1, 2, 16 and the default"
fi
expect sim-threads-range 2 "threads" -- "$VREUSE" sim sphere:1k --threads 17 --quiet

cli_done
