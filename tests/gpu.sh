#!/bin/bash
# gpu.sh OUTDIR - the one script run on the H100 (../shared/GPU.md section 3): unpacks the staged
# runtime libraries, records the GPU, runs `vreuse_tests gpu/`, compute-sanitizer memcheck /
# racecheck / synccheck on `vreuse_tests gpu-small/` (sort-last's NCCL runs in a step of their
# own), and the benchmark (which first calibrates the synthetic loads on its first scene), and
# prints a summary table LAST. Every step keeps going after a failure; the exit status is 1 when
# any step failed. Stage first with tests/stage_device.sh (binaries, scenes, debs).
# Knobs: GPU_SKIP_TESTS=1, GPU_SKIP_SANITIZER=1, GPU_SKIP_NCCL=1 (sort-last's NCCL sanitizer
#        step), GPU_SKIP_CALIBRATE=1, GPU_SKIP_BENCH=1,
#        GPU_BENCH_ARGS="SCENE... [options]" (replaces the default bench arguments),
#        GPU_TESTS=gpu/compact GPU_SMALL=gpu-small/compact (test prefixes; default gpu/ and
#        gpu-small/), GPU_BENCH_CMD=bench-compact (the vreuse command benchmarked; default bench;
#        give it GPU_BENCH_ARGS, e.g. "--reps 20", and GPU_SKIP_CALIBRATE=1),
#        GPU_TIME_BUDGET=seconds for all steps (default 480), GPU_SANITIZER_CAP=seconds per
#        sanitizer tool (default 240; racecheck of gpu-small took more than 150 s on the H200 in
#        session 18, with the walk's four modes).
. "$(dirname "$0")/device_lib.sh"  # OUTDIR, cd to the root, record, limit, device_setup
BIN=$PWD/.device/bin
export VR_SCENES=$PWD/.device/scenes
DEADLINE=$((SECONDS + ${GPU_TIME_BUDGET:-480}))

# ---- runtime libraries and device -----------------------------------------------------------
t0=$SECONDS
device_setup  # also exports VR_GIT_COMMIT and VR_GPU_DRIVER
if [ ! -x "$BIN/vreuse_tests" ] || [ ! -x "$BIN/vreuse" ]; then
    echo "gpu.sh: $BIN/vreuse and vreuse_tests missing. Hint: run tests/stage_device.sh first"
    record setup FAIL $((SECONDS - t0)) "binaries not staged"
else
    if ldd "$BIN/vreuse" | grep -q "not found"; then
        ldd "$BIN/vreuse" | grep "not found"
        record setup FAIL $((SECONDS - t0)) "missing libraries (see above)"
    else
        record setup ok $((SECONDS - t0)) "$GPU_LINE"
    fi
fi

# ---- tests ----------------------------------------------------------------------------------
if [ "${GPU_SKIP_TESTS:-0}" = 1 ]; then
    record tests skip 0 "GPU_SKIP_TESTS=1"
elif [ "$(limit 330)" -le 0 ]; then  # `timeout 0` would mean no limit at all
    record tests skip 0 "time budget spent"
else
    t0=$SECONDS
    echo "== vreuse_tests ${GPU_TESTS:-gpu/}"
    timeout "$(limit 330)" "$BIN/vreuse_tests" "${GPU_TESTS:-gpu/}" 2>&1 | tee "$OUTDIR/tests.log"
    rc=$?
    line=$(grep -E '^[0-9]+ passed' "$OUTDIR/tests.log" | tail -1)
    case $rc in
        0) record tests ok $((SECONDS - t0)) "$line" ;;
        124) record tests FAIL $((SECONDS - t0)) "timed out; $line" ;;
        *) record tests FAIL $((SECONDS - t0)) "exit $rc; $line" ;;
    esac
fi

# ---- compute-sanitizer on the small group ---------------------------------------------------
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
    if [ "${GPU_SKIP_SANITIZER:-0}" = 1 ]; then
        record "$tool" skip 0 "GPU_SKIP_SANITIZER=1"
        continue
    fi
    t0=$SECONDS
    cap=$(limit "${GPU_SANITIZER_CAP:-240}")
    if [ "$cap" -le 0 ]; then
        record "$tool" skip 0 "time budget spent"
        continue
    fi
    echo "== compute-sanitizer --tool $tool vreuse_tests ${GPU_SMALL:-gpu-small/}"
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    VR_TEST_NCCL=0 timeout "$cap" "$SANITIZER" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
        "$BIN/vreuse_tests" "${GPU_SMALL:-gpu-small/}" > "$OUTDIR/$tool.log" 2>&1
    rc=$?
    grep -E 'SUMMARY|^[0-9]+ passed' "$OUTDIR/$tool.log" | tail -3
    line=$(grep -E 'SUMMARY' "$OUTDIR/$tool.log" | tail -1)
    case $rc in
        0) record "$tool" ok $((SECONDS - t0)) "$line" ;;
        124) record "$tool" FAIL $((SECONDS - t0)) "timed out after ${cap}s" ;;
        99) record "$tool" FAIL $((SECONDS - t0)) "errors: $line" ;;
        *) record "$tool" FAIL $((SECONDS - t0)) "exit $rc; $line" ;;
    esac
done

# ---- compute-sanitizer on sort-last over NCCL (gpu-small/sortlast, every device up to 2) -----
# NCCL's own initialisation makes API calls that fail by design (kernel images for other GPUs,
# peer access already on) and its kernels use barriers with partial thread counts that synccheck
# calls divergent: API errors are left to our own checked calls, NCCL's kernels out of synccheck.
for tool in memcheck racecheck synccheck; do
    if [ "${GPU_SKIP_SANITIZER:-0}" = 1 ] || [ "${GPU_SKIP_NCCL:-0}" = 1 ]; then
        record "nccl-$tool" skip 0 "GPU_SKIP_SANITIZER / GPU_SKIP_NCCL"
        continue
    fi
    cap=$(limit 90)
    if [ "$cap" -le 0 ]; then
        record "nccl-$tool" skip 0 "time budget spent"
        continue
    fi
    t0=$SECONDS
    case $tool in
        memcheck) extra=(--report-api-errors no) ;;
        synccheck) extra=(--kernel-name-exclude kns=nccl) ;;
        *) extra=() ;;
    esac
    timeout "$cap" "$SANITIZER" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
        "$BIN/vreuse_tests" gpu-small/sortlast > "$OUTDIR/nccl-$tool.log" 2>&1
    rc=$?
    line=$(grep -E 'SUMMARY' "$OUTDIR/nccl-$tool.log" | tail -1)
    case $rc in
        0) record "nccl-$tool" ok $((SECONDS - t0)) "$line" ;;
        *) record "nccl-$tool" FAIL $((SECONDS - t0)) "exit $rc; $line" ;;
    esac
done

# ---- benchmark ------------------------------------------------------------------------------
if [ "${GPU_SKIP_BENCH:-0}" = 1 ]; then
    record bench skip 0 "GPU_SKIP_BENCH=1"
else
    t0=$SECONDS
    cap=$(limit 300)
    if [ "$cap" -le 0 ]; then
        record bench skip 0 "time budget spent"
    else
        # shellcheck disable=SC2206 # word splitting of the knob is intended
        args=(${GPU_BENCH_ARGS:-sphere:7M igea.ply stanford-bunny.obj --strategy all \
              --load simple,light,medium,heavy --block 64,128,256 --order forsyth --reps 20})
        # bare scene file names refer to the staged scenes
        for i in "${!args[@]}"; do
            a=${args[$i]}
            [[ $a != -* && $a == *.* && ! -e $a && -e $VR_SCENES/${a%%@*} ]] && args[$i]=$VR_SCENES/$a
        done
        # --calibrate: the first scene sets light/medium/heavy for this run (3x/5.5x/10x naive)
        [ "${GPU_SKIP_CALIBRATE:-0}" = 1 ] || args+=(--calibrate)
        echo "== vreuse ${GPU_BENCH_CMD:-bench} ${args[*]}"
        timeout "$cap" "$BIN/vreuse" "${GPU_BENCH_CMD:-bench}" "${args[@]}" --csv "$OUTDIR/bench.csv" \
            --md "$OUTDIR/bench.md" 2>&1 | tee "$OUTDIR/bench.log"
        rc=$?
        fails=$(grep -c ',FAIL' "$OUTDIR/bench.csv" 2>/dev/null)
        rows=$(grep -vc '^#' "$OUTDIR/bench.csv" 2>/dev/null)
        cal=$(grep -E '^calibrated' "$OUTDIR/bench.log" | tail -1)
        [ -n "$cal" ] && record calibrate ok 0 "$cal"
        case $rc in
            0) record bench ok $((SECONDS - t0)) "$((rows - 1)) rows, ${fails:-0} FAIL rows" ;;
            124) record bench FAIL $((SECONDS - t0)) "timed out after ${cap}s" ;;
            *) record bench FAIL $((SECONDS - t0)) "exit $rc, ${fails:-0} FAIL rows" ;;
        esac
    fi
fi

# ---- summary, last --------------------------------------------------------------------------
if [ -f "$OUTDIR/bench.log" ]; then
    echo
    sed -n '/^== summary/,$p' "$OUTDIR/bench.log"
fi
echo
echo "== gpu.sh summary ($GPU_LINE; logs in $OUTDIR)"
summary_exit
