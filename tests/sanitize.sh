#!/usr/bin/env bash
# sanitize.sh [asan|fuzz|all] - the sanitizer and fuzzing step of CI (.ci/run runs it after the
# README's test command; no GPU needed).
#   asan: an ASan + UBSan build of every CPU target (build-asan, -DVR_SANITIZE=ON) and the whole
#         ctest suite against it: every vreuse_tests group, every tests/cli*.sh, the assimp corpus
#         (tests/corpus.sh, when assimp-testmodels is installed). Halt on the first error, leak
#         detection on (leaks inside the system assimp are suppressed: tests/lsan.supp).
#   fuzz: a libFuzzer build (build-fuzz, clang, -DVR_FUZZ=ON) and each target listed in
#         build-fuzz/fuzz_targets.txt (vr_fuzz_target in tests/CMakeLists.txt) first replays the
#         inputs saved under tests/fuzz_corpus/crashes/TARGET/, then runs FUZZ_SECONDS (60) seeded
#         from ../shared/scenes (PLY; .gts made by `vreuse compress` from the OBJ/PLY files and
#         generators), tests/fuzz_corpus/TARGET/ and inputs written here.
# Prints per target the executions, coverage and what it found; a crash, leak, timeout (10 s) or
# out-of-memory (2048 MB) fails the script and leaves the input in build-fuzz/fuzz/TARGET/
# (printed in base64 too when small, so a CI log is enough to reproduce). Exit 0 when all passed.
# Environment: FUZZ_SECONDS, VR_SCENES (test meshes), SAN_CC (compiler of build-asan, default cc).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WHAT=${1:-all}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
SCENES=${VR_SCENES:-$ROOT/../shared/scenes}
case $WHAT in asan|fuzz|all) ;; *) echo "usage: tests/sanitize.sh [asan|fuzz|all]" >&2; exit 2 ;; esac
case $FUZZ_SECONDS in ''|*[!0-9]*|0)
    echo "sanitize: FUZZ_SECONDS='$FUZZ_SECONDS': want a whole number of seconds >= 1" >&2; exit 2 ;;
esac

export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=2048
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0

failed=0
TIMES=()
# step NAME CMD...: runs CMD, records its wall time, counts a failure
step() {
    local name=$1 start=$SECONDS rc
    shift
    echo "=== $name"
    "$@"
    rc=$?
    TIMES+=("$(printf '%-34s %5d s  %s' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")")")
    [ $rc -eq 0 ] || failed=1
    return $rc
}

# ---- ASan + UBSan: the whole suite -----------------------------------------------------------
asan_configure() { CC=${SAN_CC:-cc} cmake -B build-asan -G Ninja -DVR_SANITIZE=ON -DVR_CUDA=OFF > /dev/null; }
asan_build() { cmake --build build-asan; }
asan_test() { ctest --test-dir build-asan --output-on-failure; }

# ---- libFuzzer --------------------------------------------------------------------------------
W=$ROOT/build-fuzz/fuzz

fuzz_configure() {
    if ! command -v clang > /dev/null; then
        echo "sanitize: the fuzz build needs clang and its libFuzzer runtime" \
             "(Debian 12: apt-get install clang libclang-rt-14-dev)" >&2
        return 1
    fi
    CC=clang CXX=clang++ cmake -B build-fuzz -G Ninja -DVR_FUZZ=ON > /dev/null || return 1
    if [ ! -s build-fuzz/fuzz_targets.txt ]; then
        echo "sanitize: build-fuzz/fuzz_targets.txt is missing (tests/CMakeLists.txt writes it)" >&2
        return 1
    fi
    # every tests/fuzz_*.c is a target: one without vr_fuzz_target would never run
    local src name bad=0
    for src in tests/fuzz_*.c; do
        name=$(basename "$src" .c)
        if ! grep -qx "$name" build-fuzz/fuzz_targets.txt; then
            echo "sanitize: $src is not built: add vr_fuzz_target($name LIBS...) to the" \
                 "if(VR_FUZZ) block of tests/CMakeLists.txt" >&2
            bad=1
        fi
    done
    # fuzz_cli's table must hold every shared option and every parser of cli.h
    if grep -qx fuzz_cli build-fuzz/fuzz_targets.txt; then
        for name in $(sed -n 's/^#define \(VR_CLI_[A-Z_]*\)(.*/\1/p; s/^vr_status \(vr_cli_parse_[a-z0-9_]*\)(.*/\1/p' \
                      pipeline/cli/cli.h); do
            [ "$name" = VR_CLI_PARSE_OR_RETURN ] && continue # a command's start, no option
            if ! grep -q "\b$name\b" tests/fuzz_cli.c; then
                echo "sanitize: $name (pipeline/cli/cli.h) is missing from the table in tests/fuzz_cli.c" >&2
                bad=1
            fi
        done
    fi
    return $bad
}

fuzz_build() { cmake --build build-fuzz --target vreuse $(cat build-fuzz/fuzz_targets.txt); }

# words separated by NUL bytes, one seed file per line of arguments (fuzz_cli's input format)
cli_seed() { local f=$1; shift; printf '%s\0' "$@" > "$W/seeds/cli/$f"; }

# bytes given as decimal numbers into one seed file of fuzz_gts_encode
mesh_seed() {
    local f=$1 b
    shift
    for b in "$@"; do printf "\\$(printf %03o "$b")"; done > "$W/seeds/mesh/$f"
}

# Seeds by kind under $W/seeds/KIND: gts, ply, spec, cli, mesh.
fuzz_seeds() {
    local V=build-fuzz/vreuse src
    rm -rf "$W"
    mkdir -p "$W/seeds/gts" "$W/seeds/ply" "$W/seeds/spec" "$W/seeds/cli" "$W/seeds/mesh"
    # .gts: small generated meshes and two scenes, both restart modes
    for src in sphere:200 terrain:300 foliage:50 sphere:2k@8k "$SCENES/cow.obj" "$SCENES/teapot.obj"; do
        case $src in /*) [ -f "$src" ] || continue ;; esac
        for r in r deg; do
            "$V" compress "$src" --restart "$r" --quiet \
                -o "$W/seeds/gts/$(basename "$src" | tr ':@' '__')-$r.gts" > /dev/null || return 1
        done
    done
    # PLY: the shared scenes (cut to -max_len when read), assimp's PLY models, small ones written
    # here: ascii and binary, faces and tristrips with restarts, colors, odd property types
    for src in "$SCENES"/*.ply /usr/share/assimp/models/PLY/*.ply; do
        [ -f "$src" ] && cp "$src" "$W/seeds/ply/$(basename "$(dirname "$src")")-$(basename "$src")"
    done
    printf 'ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n3 0 2 3\n' > "$W/seeds/ply/quad-ascii.ply"
    printf 'ply\nformat ascii 1.0\ncomment strips with a restart\nelement vertex 5\nproperty double x\nproperty double y\nproperty double z\nproperty uchar red\nelement tristrips 1\nproperty list int int vertex_indices\nend_header\n0 0 0 1\n1 0 0 2\n0 1 0 3\n1 1 0 4\n2 1 0 5\n7 0 1 2 3 -1 2 4\n' > "$W/seeds/ply/strips-ascii.ply"
    { printf 'ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar uint vertex_indices\nend_header\n'
      printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\200\77\0\0\0\0\0\0\0\0\0\0\0\0\0\0\200\77\0\0\0\0'
      printf '\3\0\0\0\0\1\0\0\0\2\0\0\0'; } > "$W/seeds/ply/tri-binary-le.ply"
    { printf 'ply\nformat binary_big_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement tristrips 1\nproperty list int int vertex_indices\nend_header\n'
      printf '\0\0\0\0\0\0\0\0\0\0\0\0\77\200\0\0\0\0\0\0\0\0\0\0\0\0\0\0\77\200\0\0\0\0\0\0'
      printf '\0\0\0\3\0\0\0\0\0\0\0\1\0\0\0\2'; } > "$W/seeds/ply/strip-binary-be.ply"
    # scene specs (generators, counts, subdivision)
    local i=0 spec
    for spec in sphere sphere:1k terrain:500 foliage:10 sphere:320@1280 terrain:2k@4k foliage:1M \
                sphere:7M sphere:1.5k sphere:0 sphere:nan sphere:1e3 sphere:-5 sphere@ @5 \
                terrain:10k@2k sphere:100@200@400 x.obj@1k; do
        printf '%s' "$spec" > "$W/seeds/spec/spec$i"
        i=$((i + 1))
    done
    # fuzz_gts_encode: byte 0 = vertex count - 1, byte 1 = mode bits, then one byte per index: a
    # 5x5 grid (32 triangles) in four modes, a tetrahedron, a book of 6 pages on edge (0, 1)
    local grid=() r c m
    for r in 0 1 2 3; do for c in 0 1 2 3; do
        grid+=($((r * 5 + c)) $((r * 5 + c + 5)) $((r * 5 + c + 1)))
        grid+=($((r * 5 + c + 1)) $((r * 5 + c + 5)) $((r * 5 + c + 6)))
    done; done
    for m in 0 1 2 4; do mesh_seed grid$m 24 $m "${grid[@]}"; done
    mesh_seed tetra 3 0 0 1 2 0 3 1 1 3 2 2 3 0
    mesh_seed book 7 0 0 1 2 1 0 3 0 1 4 1 0 5 0 1 6 1 0 7
    # fuzz_cli: argument lists
    cli_seed orders --order forsyth,random+fetch --seed 7 scene.obj -q
    cli_seed lists --strategy all --load simple,heavy,loop:3000,5k --block 64,128,1024
    cli_seed numbers --nu 256 --max-indices 1023 --warp-batch 96 --reps 20 --any 4294967295
    cli_seed floats --yaw=-90.5 --pitch 15 --zoom 0.01 --ratio -0.5 --size 1280x720
    cli_seed files --csv - -o out.png --name x --cpu --accept-repairs -- --not-an-option
    cli_seed choices --restart r,deg --mode exact --kinds all --many c0,c17 --counts 1,2,3 -m off
    cli_seed errors --order sideways --block 48 --size 0x5 --load loop:-1 --csv --quiet -x
    cli_seed help --help
    cli_seed apply --epsilon 0.02 --inner --check --slice auto --agents 300k --steps 10 --seed 2018 --placement sorted --device cpu
    cli_seed split --order file,,forsyth --strategy naive,naive --level 99999999999999999999
}

# fuzz_conf NAME: the seed kinds and the longest input for one target
fuzz_conf() {
    case $1 in
        fuzz_gts) KINDS=gts MAXLEN=65536 ;;
        fuzz_gts_encode) KINDS=mesh MAXLEN=4096 ;;
        fuzz_ply) KINDS=ply MAXLEN=65536 ;;
        fuzz_spec) KINDS=spec MAXLEN=1024 ;;
        fuzz_cli) KINDS=cli MAXLEN=4096 ;;
        *) KINDS="gts ply spec cli" MAXLEN=65536 ;; # a new target: every seed until it gets a line here
    esac
}

# fuzz_one NAME: replay its saved crashes, then fuzz; prints one summary line
fuzz_one() {
    local t=$1 bin=build-fuzz/$1 dir=$W/$1 log=$W/$1.log saved k dirs=() dict=()
    fuzz_conf "$t"
    mkdir -p "$dir/corpus"
    local replay=0
    saved=(tests/fuzz_corpus/crashes/$t/*)
    if [ -e "${saved[0]}" ]; then # each input runs once; a failure still lets the fuzzing run
        if "$bin" -rss_limit_mb=2048 -timeout=10 "${saved[@]}" > "$W/$t.replay.log" 2>&1; then
            echo "$t: ${#saved[@]} saved crash input(s) replayed: all fixed"
        else
            echo "$t: FAIL: an input saved under tests/fuzz_corpus/crashes/$t/ still fails:"
            grep -E 'Running:|ERROR|runtime error|SUMMARY' "$W/$t.replay.log" | head -8 | sed 's/^/    /'
            replay=1
        fi
    fi
    for k in $KINDS; do dirs+=("$W/seeds/$k"); done
    [ -d "tests/fuzz_corpus/$t" ] && dirs+=("tests/fuzz_corpus/$t")
    [ -f "tests/fuzz_corpus/$t.dict" ] && dict=(-dict="tests/fuzz_corpus/$t.dict")
    "$bin" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 -max_len="$MAXLEN" \
        -print_final_stats=1 -artifact_prefix="$dir/" "${dict[@]}" "$dir/corpus" "${dirs[@]}" \
        > "$log" 2>&1
    local rc=$?
    local execs rate cov
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n 1)
    if [ $rc -eq 0 ]; then
        echo "$t: ${execs:-?} executions in ${FUZZ_SECONDS} s (${rate:-?}/s), ${cov:-no coverage line}: found nothing"
        return $replay
    fi
    local what input
    what=$(grep -Eo -m 1 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [^(]*|runtime error: .*' "$log" | head -n 1)
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo "$t: FAIL after ${execs:-?} executions: ${what:-exit $rc}"
    grep -E '^ *#[0-9]+ 0x|runtime error|SUMMARY' "$log" | grep -v 'fuzzer::\| in main \|libc_start' | head -12 | sed 's/^/    /'
    if [ -n "$input" ] && [ -f "$input" ]; then
        echo "    input: $input ($(wc -c < "$input") bytes); reproduce: $bin $input"
        if [ "$(wc -c < "$input")" -le 4096 ]; then
            echo "    base64 (decode with base64 -d > crash):"
            base64 < "$input" | sed 's/^/      /'
        fi
    fi
    echo "    log: $log"
    return 1
}

fuzz_run() {
    local t bad=0
    for t in $(cat build-fuzz/fuzz_targets.txt); do
        fuzz_one "$t" || bad=1
    done
    return $bad
}

start=$SECONDS
if [ "$WHAT" != fuzz ]; then
    step "asan: configure" asan_configure &&
        step "asan: build" asan_build &&
        step "asan: ctest (suite, cli, corpus)" asan_test
fi
if [ "$WHAT" != asan ]; then
    step "fuzz: configure" fuzz_configure &&
        step "fuzz: build" fuzz_build &&
        step "fuzz: seeds" fuzz_seeds &&
        step "fuzz: run (${FUZZ_SECONDS} s per target)" fuzz_run
fi
echo "=== summary"
printf '%s\n' "${TIMES[@]}"
printf '%-34s %5d s\n' "total" $((SECONDS - start))
if [ $failed -ne 0 ]; then
    echo "sanitize: FAILED (see above)"
    exit 1
fi
echo "sanitize: all passed"
