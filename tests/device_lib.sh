# device_lib.sh - what the H100 scripts (tests/gpu.sh, tests/render_h100.sh) share; sourced by
# them, not run. Sourcing it with the script's arguments takes OUTDIR from $1 (created, made
# absolute) and changes to the repository root. Then the script sets DEADLINE (SECONDS at which
# its time budget ends) and may set LIMIT_RESERVE (seconds limit keeps back for the summary,
# default 15). Provides record, limit, device_setup and summary_exit (below).
set -o pipefail
OUTDIR=${1:?usage: tests/$(basename "$0") OUTDIR}
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/.." || exit 1
SUMMARY=()
FAILED=0

# record NAME STATUS SECONDS NOTE: one summary line; FAIL makes the exit status 1
record() {
    SUMMARY+=("$(printf '%-17s %-6s %5ss  %s' "$1" "$2" "$3" "$4")")
    [ "$2" = FAIL ] && FAILED=1
}

# limit CAP: seconds a step may take, capped by what is left of the budget (0: none left)
limit() {
    local left=$((DEADLINE - SECONDS - ${LIMIT_RESERVE:-15}))
    [ "$left" -lt 0 ] && left=0
    [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

# device_setup: unpacks the staged binaries (.device/*/NAME.xz) and runtime libraries
# (.device/debs, from tests/stage_device.sh)
# into /tmp/rt and puts them on LD_LIBRARY_PATH; GPU_LINE = "name, driver" of the GPU (or why
# there is none), also written to OUTDIR/gpu.txt; exports VR_GIT_COMMIT (the staged binaries'
# commit, .device/commit.txt) and VR_GPU_DRIVER for the bench files' headers: the device's copy of
# the tree may not have the staging checkout's HEAD (session 26's bench files said 0310d1e)
device_setup() {
    local z
    for z in .device/*/*.xz; do  # binaries staged compressed (tests/stage_device.sh)
        [ -e "$z" ] && xz -dc "$z" > "${z%.xz}" && chmod +x "${z%.xz}"
    done
    mkdir -p /tmp/rt
    for f in .device/debs/*.deb; do
        [ -e "$f" ] && dpkg -x "$f" /tmp/rt
    done
    export LD_LIBRARY_PATH=/tmp/rt/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    GPU_LINE=
    command -v nvidia-smi > /dev/null &&
        GPU_LINE=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)
    [ -n "$GPU_LINE" ] || GPU_LINE="no nvidia-smi"
    echo "gpu: $GPU_LINE"
    echo "$GPU_LINE" > "$OUTDIR/gpu.txt"
    [ -f .device/commit.txt ] && export VR_GIT_COMMIT=$(cat .device/commit.txt)
    case "$GPU_LINE" in *", "*) export VR_GPU_DRIVER=${GPU_LINE##*, } ;; esac
}

# summary_exit: prints the summary lines (also to OUTDIR/summary.txt) and exits 1 when a step failed
summary_exit() {
    printf '%s\n' "${SUMMARY[@]}" | tee "$OUTDIR/summary.txt"
    exit $FAILED
}
