#!/bin/sh
# corpus.sh VREUSE [OUT.md] - `vreuse info` on every file of Debian's assimp-testmodels
# (/usr/share/assimp/models, ~600 models, textures and deliberately broken files), each with a
# 10 s timeout (for hangs; 2 s failed a slow file on a loaded 2-core machine) and a 1 GiB
# address-space limit. Each outcome is one of: loaded, refused (exit 1 with a message), timeout,
# out of memory (the limit was hit: a message saying so, or std::bad_alloc), crash (killed by a signal), other (any other exit code). Writes OUT.md (default
# corpus.md): a summary by outcome and by format folder, the failures, then one row per file.
# Fails (exit 1) on any crash, timeout, out of memory or other, and when a file under invalid/
# loads; exit 77 (SKIP) when the models are not installed. Run by ctest ("corpus"); the committed
# table is bench/results/corpus.md:  tests/corpus.sh build/vreuse bench/results/corpus.md
# Environment: CORPUS_DIR (models folder), CORPUS_TIMEOUT (seconds, 10), CORPUS_AS_MB (1024; 0: no
# limit, for sanitized binaries, which reserve terabytes of address space: set ASAN_OPTIONS
# max_allocation_size_mb instead; their reports count as crashes, their out-of-memory as such).
set -u
VREUSE=${1:?usage: tests/corpus.sh path/to/vreuse [OUT.md]}
OUT=${2:-corpus.md}
DIR=${CORPUS_DIR:-/usr/share/assimp/models}
LIMIT=${CORPUS_TIMEOUT:-10}
AS_MB=${CORPUS_AS_MB:-1024}

if [ ! -d "$DIR" ]; then
    echo "SKIP corpus: $DIR not found (install the models: apt-get install assimp-testmodels," \
         "or set CORPUS_DIR)"
    exit 77
fi
for tool in timeout date $([ "$AS_MB" -gt 0 ] && echo prlimit); do
    if ! command -v "$tool" > /dev/null; then
        echo "corpus: '$tool' is missing (Debian: apt-get install coreutils util-linux)" >&2
        exit 1
    fi
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
case $VREUSE in /*) ;; *) VREUSE=$(pwd)/$VREUSE ;; esac
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
if [ ! -x "$VREUSE" ]; then
    echo "corpus: $VREUSE is not an executable (build it first)" >&2
    exit 1
fi
TIMER= # peak memory; without GNU time the column shows "-"
[ -x /usr/bin/time ] && TIMER="/usr/bin/time -f %M -o"
LIMITER=
[ "$AS_MB" -gt 0 ] && LIMITER="prlimit --as=$((AS_MB * 1048576)) --"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -n "$TIMER" ] && TIMER="$TIMER $TMP/time"
ROWS=$TMP/rows # path<TAB>format<TAB>outcome<TAB>ms<TAB>peak MiB<TAB>message
: > "$ROWS"

# Markdown cell: one line, no pipes, at most 200 characters
cell() { tr '\t|' ' /' | tr -d '\r' | cut -c1-200; }

cd "$DIR" || exit 1
find . -type f | sed 's|^\./||' | LC_ALL=C sort > "$TMP/files"
total=$(wc -l < "$TMP/files")
BOUND="a ${AS_MB} MiB address-space limit"
[ "$AS_MB" -gt 0 ] || BOUND="no address-space limit"
echo "corpus: $total files in $DIR, ${LIMIT} s timeout and $BOUND each"
while IFS= read -r f; do
    rm -f "$TMP/time"
    start=$(date +%s%N)
    timeout -k 1 "$LIMIT" $TIMER $LIMITER "$VREUSE" info "$f" > "$TMP/out" 2> "$TMP/err" < /dev/null
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    peak=-
    if [ -n "$TIMER" ] && [ -s "$TMP/time" ]; then
        kb=$(tail -n 1 "$TMP/time")
        case $kb in ''|*[!0-9]*) ;; *) peak=$(( (kb + 1023) / 1024 )) ;; esac
    fi
    msg=$(grep -v '^$' "$TMP/err" | head -n 1 | cell)
    # a sanitizer's report: its headline says more than the first line
    san=$(grep -E -m 1 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/err" |
          sed 's/^==[0-9]*==//' | cell)
    [ -n "$san" ] && msg=$san
    [ -n "$san" ] && [ "$rc" -ge 1 ] && [ "$rc" -le 128 ] && rc=134 # a report is a crash
    case $rc in
        0)
            outcome=loaded
            tris=$(sed -n 's/^ *triangles *\([0-9,]*\).*/\1/p' "$TMP/out" | head -n 1)
            [ -n "$msg" ] || msg="$tris triangles"
            ;;
        1)
            if grep -Eqi 'out of memory|bad_alloc|cannot allocate' "$TMP/err"; then
                outcome="out of memory"
            else
                outcome=refused
            fi
            ;;
        124) outcome=timeout; msg="no result after $LIMIT s" ;;
        137)
            if [ "$ms" -ge $((LIMIT * 1000)) ]; then
                outcome=timeout; msg="no result after $LIMIT s (killed)"
            else
                outcome=crash; msg="signal 9${msg:+: $msg}"
            fi
            ;;
        *)
            if [ "$rc" -gt 128 ]; then
                sig=$((rc - 128))
                if grep -Eq 'bad_alloc|Sanitizer: (out-of-memory|allocation-size-too-big|requested allocation size)' "$TMP/err"; then
                    outcome="out of memory"
                else
                    outcome=crash
                fi
                msg="signal $sig ($(kill -l "$sig" 2>/dev/null || echo ?))${msg:+: $msg}"
            else
                outcome=other; msg="exit $rc${msg:+: $msg}"
            fi
            ;;
    esac
    format=${f%%/*}
    [ "$format" = "$f" ] && format=.
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$format" "$outcome" "$ms" "$peak" "$msg" >> "$ROWS"
done < "$TMP/files"

# failures: crash, timeout, out of memory, other; and any file under invalid/ that loads
awk -F'\t' '$3 == "crash" || $3 == "timeout" || $3 == "out of memory" || $3 == "other" ||
            ($2 == "invalid" && $3 == "loaded")' "$ROWS" > "$TMP/failed"
failed=$(wc -l < "$TMP/failed")

{
    echo "# assimp test models through \`vreuse info\`"
    echo
    echo "Every file of Debian's \`assimp-testmodels\` ($DIR, $total files: models, their"
    echo "textures and materials, and the deliberately broken files of \`invalid/\`), one"
    echo "\`vreuse info FILE\` each with a ${LIMIT} s timeout and $BOUND."
    echo "Written by \`tests/corpus.sh\` (ctest \`corpus\`) on $(date -u '+%Y-%m-%d')" \
         "at commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo "A crash, timeout, out-of-memory or unexpected exit fails the test, and so does a file"
    echo "under \`invalid/\` that loads. Peak memory is the maximum resident set (GNU time)."
    echo
    echo "| outcome | files |"
    echo "|---|---:|"
    for o in loaded refused timeout "out of memory" crash other; do
        echo "| $o | $(awk -F'\t' -v o="$o" '$3 == o' "$ROWS" | wc -l) |"
    done
    echo "| **all** | $total |"
    echo
    echo "By format folder:"
    echo
    echo "| folder | files | loaded | refused | timeout | out of memory | crash | other |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'\t' '{ n[$2]++; c[$2, $3]++ }
        END { for (f in n) printf "| %s | %d | %d | %d | %d | %d | %d | %d |\n", f, n[f],
              c[f, "loaded"], c[f, "refused"], c[f, "timeout"], c[f, "out of memory"],
              c[f, "crash"], c[f, "other"] }' "$ROWS" | LC_ALL=C sort
    echo
    if [ "$failed" -gt 0 ]; then
        echo "Failures ($failed):"
        echo
        echo "| file | outcome | ms | message |"
        echo "|---|---|---:|---|"
        awk -F'\t' '{ printf "| %s | %s%s | %s | %s |\n", $1, $3,
                      ($2 == "invalid" && $3 == "loaded") ? " (invalid file)" : "", $4, $6 }' \
            "$TMP/failed"
    else
        echo "No failures."
    fi
    echo
    echo "Every file:"
    echo
    echo "| file | outcome | ms | peak MiB | message (first line) |"
    echo "|---|---|---:|---:|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $3, $4, $5, $6 }' "$ROWS"
} > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"

awk -F'\t' '{ c[$3]++ } END { for (o in c) printf "  %-14s %d\n", o, c[o] }' "$ROWS" | sort
echo "corpus: table in $OUT"
if [ "$failed" -gt 0 ]; then
    echo "corpus: $failed file(s) failed:"
    awk -F'\t' '{ printf "  FAIL %s: %s%s: %s\n", $1, $3,
                  ($2 == "invalid" && $3 == "loaded") ? " (invalid file)" : "", $6 }' "$TMP/failed"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"
exit 0
