#!/bin/sh
# cli_files.sh VREUSE - end-to-end checks that scene specs and files cannot hurt the user: a
# named pipe is refused at once, bad counts and '@' suffixes are named, 5000 chained suffixes
# are refused, broken PLY files are refused (or repaired with --accept-repairs), non-finite
# transforms are refused, a compressed file loads as its source triangles; exit codes, and
# inputs are left untouched. Run by ctest ("cli-files").
. "$(dirname "$0")/cli_lib.sh"

# a named pipe: refused before it is opened (an open would wait for a writer forever)
mkfifo "$TMP/pipe.ply"
expect fifo 1 "pipe\.ply: not a regular file \(a named pipe\)" -- timeout 5 "$VREUSE" info "$TMP/pipe.ply"
start=$(date +%s)
timeout 5 "$VREUSE" sim "$TMP/pipe.ply" --quiet > /dev/null 2>&1
rc=$?
if [ $rc -eq 1 ] && [ $(($(date +%s) - start)) -le 2 ]; then ok fifo-sim-fast; else bad fifo-sim-fast "exit $rc"; fi
expect fifo-suffix 1 "named pipe" -- timeout 5 "$VREUSE" info "$TMP/pipe.ply@1k"
expect directory 1 "not a regular file \(a directory\)" -- "$VREUSE" info "$TMP"

# specs: the bad part is named
expect sphere-nan 1 "sphere:nan: bad triangle count 'nan'" -- "$VREUSE" info sphere:nan
expect sphere-inf 1 "bad triangle count 'inf'" -- "$VREUSE" info sphere:inf
expect sphere-hex 1 "bad triangle count '0x10'" -- "$VREUSE" info sphere:0x10
expect sphere-half 1 "bad triangle count '0.5'" -- "$VREUSE" info sphere:0.5
expect bad-suffix 1 "'x' after '@' is not a triangle count" -- "$VREUSE" info sphere:1k@x
expect empty-spec 1 "empty scene name" -- "$VREUSE" info ""
spec=sphere:1k
i=0
while [ $i -lt 2000 ]; do spec="$spec@1"; i=$((i + 1)); done
expect chained-2000 1 "more than 8 '@N' suffixes" -- timeout 5 "$VREUSE" info "$spec"
while [ $i -lt 5000 ]; do spec="$spec@1"; i=$((i + 1)); done
expect chained-5000 1 "scene name of 10009 characters; at most 4095" -- timeout 5 "$VREUSE" info "$spec"
expect chained-3 0 "triangles +5,120" -- "$VREUSE" info sphere:1k@2k@3k

# PLY: faces with 2 corners and trailing data are refused; --accept-repairs drops them
head='ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n'
printf "$head"'3 0 1 2\n2 0 1\n' > "$TMP/short.ply"
printf "$head"'3 0 1 2\n3 0 2 1\n3 0 1 2\n' > "$TMP/trail.ply"
sum_short=$(md5sum < "$TMP/short.ply")
sum_trail=$(md5sum < "$TMP/trail.ply")
expect ply-short 1 "short\.ply: PLY faces with fewer than 3 corners: 1 \(the first: face 1, 2 corners\)" -- \
    "$VREUSE" info "$TMP/short.ply"
expect ply-short-repaired 0 "warning: .*short\.ply: 1 faces with fewer than 3 corners dropped" -- \
    "$VREUSE" info "$TMP/short.ply" --accept-repairs
expect ply-trailing 1 "trail\.ply: 1 non-blank lines after the last declared element" -- \
    "$VREUSE" sim "$TMP/trail.ply" --quiet
expect ply-trailing-repaired 0 "triangles +2" -- "$VREUSE" info "$TMP/trail.ply" --accept-repairs
unchanged ply-short-kept "$TMP/short.ply" "$sum_short"
unchanged ply-trail-kept "$TMP/trail.ply" "$sum_trail"

# a run in which no scene loads leaves an existing results file as it was
echo "earlier results" > "$TMP/results.csv"
sum_results=$(md5sum < "$TMP/results.csv")
expect info-none-loaded 1 "missing\.obj: cannot open" -- "$VREUSE" info "$TMP/missing.obj" --csv "$TMP/results.csv"
unchanged info-none-loaded-kept "$TMP/results.csv" "$sum_results"

# a node transform that overflows float: refused by every command, nothing written
cat > "$TMP/big.gltf" <<'EOF'
{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
 "nodes":[{"mesh":0,"scale":[1e38,1e38,1e38]}],
 "meshes":[{"name":"tri","primitives":[{"attributes":{"POSITION":0}}]}],
 "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAAAgQQAAAAAAAAAAAAAAAAAAIEEAAAAA"}],
 "bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[10,10,0]}]}
EOF
overflow="big\.gltf: draw 1 of 1 \('tri'\) after its node transform: vertex 1 has a non-finite position \(inf, 0, 0\)"
expect overflow-info 1 "$overflow" -- "$VREUSE" info "$TMP/big.gltf"
expect overflow-compress 1 "$overflow" -- "$VREUSE" compress "$TMP/big.gltf" -o "$TMP/big.gts" --quiet
expect overflow-render 1 "$overflow" -- "$VREUSE" render "$TMP/big.gltf" --cpu --out "$TMP/big.png" --quiet
if [ -e "$TMP/big.gts" ] || [ -e "$TMP/big.png" ]; then bad overflow-no-output "an output was written"; else ok overflow-no-output; fi

# a compressed file is its source triangles, in every restart mode, and stays so when
# compressed again
if [ -d "$SCENES" ]; then
    expect gts-deg 0 "wrote" -- "$VREUSE" compress "$SCENES/cow.obj" -o "$TMP/cow.gts" --restart deg --quiet
    sum_gts=$(md5sum < "$TMP/cow.gts")
    expect gts-deg-info 0 "cow\.gts,1,2903,2903,5804,0,0\.8333" -- "$VREUSE" info "$TMP/cow.gts" --csv -
    expect gts-deg-sim 0 "cow\.gts +file +2903 +5804 +0\.833" -- "$VREUSE" sim "$TMP/cow.gts" --order file --quiet
    expect gts-again 0 "5,804 source" -- "$VREUSE" compress "$TMP/cow.gts" -o "$TMP/cow2.gts" --restart deg --quiet
    unchanged gts-kept "$TMP/cow.gts" "$sum_gts"
    expect gts-again-info 0 "cow2\.gts,1,2903,2903,5804,0" -- "$VREUSE" info "$TMP/cow2.gts" --csv -
    expect cow-bad-suffix 1 "cow\.obj@x: no such file, and 'x' after '@' is not a triangle count" -- \
        "$VREUSE" info "$SCENES/cow.obj@x"
fi

cli_done
