#!/bin/sh
# cli_assimp.sh VREUSE - files read through assimp cannot hurt the user: `vreuse info` on deep
# node chains, instancing bombs, lying GLB/OFF headers, a 100,000-group OBJ, dropped glTF
# triangles, an infinite transform, corrupt JSON/GLB, an FBX that crashes assimp and an X mesh
# that asks it for 4.8 GB exits 1 quickly with a message that names the file and the problem,
# accepts repairs only with --accept-repairs, and leaves every input (and an old output) as it
# was. Run by ctest ("cli-assimp").
. "$(dirname "$0")/cli_lib.sh"

# glTF 2.0 around a data: buffer of 3 vertices (0,0,0 1,0,0 0,1,0) + 9 indices (0 1 2 0 1 7 0 2 1)
DATA=AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAEAAAACAAAAAAAAAAEAAAAHAAAAAAAAAAIAAAABAAAA
# gltf NODES ROOTS INDEX_COUNT > file
gltf() {
    printf '{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":%s}],"nodes":%s,' "$2" "$1"
    printf '"meshes":[{"name":"m","primitives":[{"attributes":{"POSITION":0},"indices":1}]}],'
    printf '"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},'
    printf '{"bufferView":1,"componentType":5125,"count":%s,"type":"SCALAR"}],' "$3"
    printf '"bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":%s}],' $(($3 * 4))
    printf '"buffers":[{"byteLength":72,"uri":"data:application/octet-stream;base64,%s"}]}\n' "$DATA"
}

# check NAME FILE WANT_EXIT PATTERN [OPTIONS...]: `vreuse info FILE` within 5 s, exit code and
# message as expected, FILE unchanged afterwards
check() {
    name=$1 file=$2 want=$3 pattern=$4
    shift 4
    sum=$(md5sum < "$file")
    expect "$name" "$want" "$pattern" -- timeout 5 "$VREUSE" info "$file" --quiet "$@"
    unchanged "$name-kept" "$file" "$sum"
}

gltf '[{"mesh":0}]' '[0]' 3 > "$TMP/ok.gltf"
check gltf-ok "$TMP/ok.gltf" 0 "triangles +1$"

# 1. a node chain 30,000 deep (assimp's recursion crashed), glTF and Collada
awk 'BEGIN { printf "["; for (i = 0; i < 29999; ++i) printf "{\"children\":[%d]},", i + 1; printf "{\"mesh\":0}]" }' > "$TMP/nodes"
gltf "$(cat "$TMP/nodes")" '[0]' 3 > "$TMP/chain.gltf"
check deep-gltf "$TMP/chain.gltf" 1 "chain\.gltf: node tree 30000 levels deep \(limit 1024\)"
GEOM='<library_geometries><geometry id="g"><mesh><source id="p"><float_array id="pa" count="9">0 0 0 1 0 0 0 1 0</float_array><technique_common><accessor source="#pa" count="3" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source><vertices id="v"><input semantic="POSITION" source="#p"/></vertices><triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles></mesh></geometry></library_geometries>'
{
    printf '<?xml version="1.0"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">%s' "$GEOM"
    printf '<library_visual_scenes><visual_scene id="s">'
    awk 'BEGIN { for (i = 0; i < 30000; ++i) printf "<node>"; printf "<instance_geometry url=\"#g\"/>"; for (i = 0; i < 30000; ++i) printf "</node>" }'
    printf '</visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>\n'
} > "$TMP/chain.dae"
check deep-collada "$TMP/chain.dae" 1 "chain\.dae: node tree more than 1024 levels deep"

# 2. every node lists the next one twice: 2^39 instances from 1.4 KB
awk 'BEGIN { printf "["; for (i = 0; i < 39; ++i) printf "{\"children\":[%d,%d]},", i + 1, i + 1; printf "{\"mesh\":0}]" }' > "$TMP/nodes"
gltf "$(cat "$TMP/nodes")" '[0]' 3 > "$TMP/bomb.gltf"
check instancing-bomb "$TMP/bomb.gltf" 1 "bomb\.gltf: 1099511627775 node instances .*limit 1048576"

# 3. lying sizes: a GLB JSON chunk of "4 GB", an OFF header of 353535235358 vertices
printf 'glTF\002\000\000\000\100\000\000\000\360\377\377\377JSON{"asset":{"version":"2.0"}}      ' > "$TMP/lie.glb"
head -c 64 /dev/zero >> "$TMP/lie.glb"
check glb-chunk "$TMP/lie.glb" 1 "lie\.glb: the GLB JSON chunk claims 4294967280 bytes"
printf 'OFF\n353535235358 6 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n' > "$TMP/huge.off"
check off-header "$TMP/huge.off" 1 "huge\.off: the OFF header declares 353535235358 vertices"

# 4. 100,000 distinct objects: minutes in assimp's OBJ reader
awk 'BEGIN { print "v 0 0 0\nv 1 0 0\nv 0 1 0"; for (i = 0; i < 100000; ++i) printf "o g%d\nf 1 2 3\n", i }' > "$TMP/groups.obj"
check obj-groups "$TMP/groups.obj" 1 "groups\.obj: more than 16384 objects"

# 5. silent data changes: refused, or loaded with the count under --accept-repairs
gltf '[{"mesh":0}]' '[0]' 9 > "$TMP/range.gltf"
check dropped "$TMP/range.gltf" 1 "range\.gltf: assimp dropped 1 of 3 triangles \(indices out of range\); load it anyway with --accept-repairs"
check dropped-accepted "$TMP/range.gltf" 0 "warning: .*range\.gltf: assimp dropped 1 of 3 triangles" --accept-repairs
check dropped-accepted-count "$TMP/range.gltf" 0 "triangles +2$" --accept-repairs
gltf '[{"mesh":0}]' '[0]' 5 > "$TMP/mod3.gltf"
check not-multiple-of-3 "$TMP/mod3.gltf" 1 "mod3\.gltf: assimp drops the last 2 indices of 1 primitive"
gltf '[{"children":[1],"scale":[1e30,1e30,1e30]},{"mesh":0,"scale":[1e30,1e30,1e30]}]' '[0]' 3 > "$TMP/inf.gltf"
check infinite-transform "$TMP/inf.gltf" 1 "inf\.gltf: node .* transform that is not finite"
check infinite-not-a-repair "$TMP/inf.gltf" 1 "not finite" --accept-repairs

# 6. corrupt JSON / GLB: what is wrong, not "No suitable reader found"
head -c 200 "$TMP/ok.gltf" > "$TMP/cut.gltf"
check json-syntax "$TMP/cut.gltf" 1 "cut\.gltf: JSON syntax error at byte 200"
printf 'gLTF\002\000\000\000\024\000\000\000' > "$TMP/magic.glb"
check glb-magic "$TMP/magic.glb" 1 "magic\.glb: bad GLB magic 'gLTF'"

# an empty 'f' line: assimp skips the face, so the file is refused unless repairs are accepted
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf\nf 1 2 3\n' > "$TMP/emptyf.obj"
check obj-empty-face "$TMP/emptyf.obj" 1 "emptyf\.obj: 1 empty 'f' line .*--accept-repairs"
expect obj-empty-face-accepted 0 "repaired +1 " -- "$VREUSE" info "$TMP/emptyf.obj" --accept-repairs

# 7. what no pre-check foresees: assimp runs in a child process with a memory and a time bound.
# A crash inside assimp (it frees a block twice reading this FBX, found by fuzzing)
cp "$(dirname "$0")/data/fbx-double-free.fbx" "$TMP/crash.fbx"
check assimp-crash "$TMP/crash.fbx" 1 "crash\.fbx: assimp crashed reading it \(SIGABRT: double free or heap corruption.*the file is corrupt or uses a feature assimp cannot read"
echo "an older image" > "$TMP/old.png"
sum=$(md5sum < "$TMP/old.png")
expect assimp-crash-render 1 "crash\.fbx: assimp crashed" -- timeout 10 "$VREUSE" render "$TMP/crash.fbx" -o "$TMP/old.png" --quiet
unchanged assimp-crash-render-kept "$TMP/old.png" "$sum"
# an X mesh declaring 400,000,000 vertices in 100 bytes: assimp allocates 4.8 GB before reading
# them (7 s and 4.7 GB of memory without the bound); no pre-check reads X meshes
printf 'xof 0303txt 0032\nMesh m {\n 400000000;\n 0;0;0;,\n 1;0;0;,\n 0;1;0;;\n 1;\n 3;0,1,2;;\n}\n' > "$TMP/bomb.x"
if grep -qa __asan_init "$VREUSE"; then
    echo "SKIP cli/x-bomb: an AddressSanitizer build has no memory bound"
else
    check x-bomb "$TMP/bomb.x" 1 "bomb\.x: assimp needed more than 4096 MiB of memory reading it.*set VR_ASSIMP_MEMORY_MB=N"
    expect x-bomb-bound 1 "bomb\.x: assimp needed more than 300 MiB" -- env VR_ASSIMP_MEMORY_MB=300 timeout 5 "$VREUSE" info "$TMP/bomb.x" --quiet
fi
expect bad-memory-bound 1 "VR_ASSIMP_MEMORY_MB='lots': want a whole number of MiB.*unset it for the default" -- env VR_ASSIMP_MEMORY_MB=lots "$VREUSE" info "$TMP/ok.gltf" --quiet
expect bad-time-bound 1 "VR_ASSIMP_TIMEOUT_S='1.5': want a whole number of seconds" -- env VR_ASSIMP_TIMEOUT_S=1.5 "$VREUSE" info "$TMP/ok.gltf" --quiet
expect bounds-set 0 "triangles +1$" -- env VR_ASSIMP_MEMORY_MB=0 VR_ASSIMP_TIMEOUT_S=30 "$VREUSE" info "$TMP/ok.gltf" --quiet

# the OpenGL reference loads scenes the same way: no crash on the deep chain (it may also stop
# earlier where there is no EGL device)
GLREF=$(dirname "$VREUSE")/vreuse_glref
if [ -x "$GLREF" ]; then
    expect glref-deep 1 "levels deep|EGL|OpenGL" -- timeout 10 "$GLREF" "$TMP/chain.gltf"
fi

cli_done
