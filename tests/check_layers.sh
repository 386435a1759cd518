#!/bin/sh
# check_layers.sh [ROOT] - the layering rule of README "Layout", checked on every #include "...":
# a folder may include its own headers and those of the folders listed for it below, all of which
# sit lower in the list, so no include cycle between folders can form. Includes name their file
# from the repository root ("reuse/reuse.h"); one that names no existing file fails too.
# Run by ctest ("layers"). Prints each violation as FILE:LINE: FROM -> TO and exits 1.
set -u
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT" || exit 1

# FOLDER: the folders it may include (each listed earlier), bottom layer first
LAYERS='
pipeline:
pipeline/gts: pipeline
pipeline/compact: pipeline
reuse: pipeline pipeline/gts pipeline/compact
scenes: pipeline pipeline/gts
sim: pipeline reuse
pipeline/stage: pipeline pipeline/gts pipeline/compact reuse
pipeline/apps: pipeline reuse scenes
pipeline/lib: pipeline pipeline/gts pipeline/compact reuse sim pipeline/stage
raster: pipeline pipeline/gts pipeline/compact reuse pipeline/stage
bench: pipeline pipeline/gts pipeline/compact reuse scenes sim pipeline/stage raster
pipeline/cli: pipeline pipeline/gts pipeline/compact reuse scenes sim pipeline/stage pipeline/apps raster bench
tests: pipeline pipeline/gts pipeline/compact reuse scenes sim pipeline/stage pipeline/apps raster bench pipeline/cli tests
tests/example:
'
fail=0
# the table itself: every allowed folder must be listed before the folder that uses it
seen=' '
for line in $(echo "$LAYERS" | tr ' ' '|'); do
    folder=${line%%:*}
    for dep in $(echo "${line#*:}" | tr '|' ' '); do
        case "$seen" in
            *" $dep "*) ;;
            *) [ "$dep" = "$folder" ] || { echo "check_layers: $folder may include $dep, which is not below it"; fail=1; } ;;
        esac
    done
    seen="$seen$folder "
done

allowed() { # FOLDER -> its list, or "?" for a folder the table does not know
    echo "$LAYERS" | awk -v f="$1" -F': *' '$1 == f { print $2; found = 1 } END { if (!found) print "?" }'
}

files=$(find pipeline reuse scenes sim raster bench tests -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
checked=0
for f in $files; do
    dir=$(dirname "$f")
    ok=$(allowed "$dir")
    if [ "$ok" = "?" ]; then
        echo "$f: folder $dir is not in the layer table of tests/check_layers.sh"
        fail=1
        continue
    fi
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
        sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' > /tmp/check_layers.$$
    while read -r line inc; do
        checked=$((checked + 1))
        if [ ! -f "$inc" ]; then
            echo "$f:$line: #include \"$inc\" names no file below the repository root"
            fail=1
            continue
        fi
        to=$(dirname "$inc")
        [ "$to" = "$dir" ] && continue
        case " $ok " in
            *" $to "*) ;;
            *) echo "$f:$line: $dir -> $to (allowed: ${ok:-nothing})"; fail=1 ;;
        esac
    done < /tmp/check_layers.$$
done
rm -f /tmp/check_layers.$$
if [ "$fail" -eq 0 ]; then
    echo "layers: $(echo "$files" | wc -l) files, every include points down (1 passed, 0 failed)"
    exit 0
fi
echo "layers: violations above (0 passed, 1 failed)"
exit 1
