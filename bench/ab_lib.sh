# ab_lib.sh - what bench/frames_ab.sh and bench/kernels_ab.sh share; sourced by them (from the
# repository root), not run.

# ab_scenes LAST: `scenes` = the words of $AB_SCENES, else every .obj and .ply in $VR_SCENES
# (default .device/scenes, where tests/stage_device.sh puts the shared scenes) and then LAST.
ab_scenes() {
    local dir=${VR_SCENES:-$PWD/.device/scenes} f
    if [ -n "${AB_SCENES:-}" ]; then
        read -r -a scenes <<< "$AB_SCENES"
        return
    fi
    scenes=()
    for f in "$dir"/*.obj "$dir"/*.ply; do
        [ -e "$f" ] && scenes+=("$f")
    done
    scenes+=("$1")
}

# ab_binary DIR WHAT: makes sure DIR/vreuse exists, unpacked from DIR/vreuse.xz when only that
# was staged; exits 2 with "DIR/vreuse not found WHAT" otherwise.
ab_binary() {
    if [ ! -x "$1/vreuse" ] && [ -f "$1/vreuse.xz" ]; then
        xz -dc "$1/vreuse.xz" > "$1/vreuse" && chmod +x "$1/vreuse"
    fi
    [ -x "$1/vreuse" ] || { echo "$(basename "$0"): $1/vreuse not found$2" >&2; exit 2; }
}
