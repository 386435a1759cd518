#!/bin/bash
# stage_device.sh - prepares a run of tests/gpu.sh on the H100 (../shared/GPU.md sections 1-2):
# builds build-gpu for sm_90 without the SDL2 viewer, copies vreuse and vreuse_tests to
# .device/bin, the shared scenes to .device/scenes, the git commit to .device/commit.txt, and
# downloads the runtime debs into .device/debs when they are missing (the H100 has no network).
# The binaries travel xz-compressed (.device/bin/NAME.xz; about 80 MB of fat binaries become 13,
# under the device tool's 64 MiB for the tree and carried paths); device_lib.sh's device_setup
# unpacks them there.
# Usage: tests/stage_device.sh   (BUILD_DIR=... to use another build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-gpu}

cmake -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVR_CUDA=ON -DVR_VIEWER=OFF > /dev/null
cmake --build "$BUILD_DIR" -j2 --target vreuse vreuse_tests vreuse_glref

mkdir -p .device/bin .device/scenes .device/debs
rm -f .device/bin/*
for b in vreuse vreuse_tests vreuse_glref; do
    xz -T2 -6 -c "$BUILD_DIR/$b" > ".device/bin/$b.xz"
done
cp ../shared/scenes/* .device/scenes/
chmod -R u+w .device/scenes   # the shared copies are read-only; keep re-staging possible

# the commit the binaries came from (+dirty when the tree has uncommitted changes)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "no-commit")
[ -n "$(git status --porcelain 2>/dev/null | grep -v '^??' || true)" ] && commit="$commit+dirty"
echo "$commit" > .device/commit.txt

pkgs=(libassimp5 libdraco7 libminizip1 libmeshoptimizer2d libegl1 libglvnd0)
missing=()
for p in "${pkgs[@]}"; do
    compgen -G ".device/debs/${p}_*.deb" > /dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    # apt-get download as root warns that '_apt' could not access the file: harmless
    (cd .device/debs && apt-get download "${missing[@]}")
fi

# the CUDA binaries must not pull in SDL2 (about 40 libraries the H100 lacks)
if ldd "$BUILD_DIR/vreuse" | grep -i sdl > /dev/null; then
    echo "stage_device.sh: $BUILD_DIR/vreuse links SDL2; configure with -DVR_VIEWER=OFF" >&2
    exit 1
fi
if ! grep -q 'CMAKE_CUDA_COMPILER:' "$BUILD_DIR/CMakeCache.txt" ||
   ! strings "$BUILD_DIR/vreuse_tests" | grep 'gpu-small/' > /dev/null; then
    echo "stage_device.sh: $BUILD_DIR is not a CUDA build (no gpu-small/ tests)" >&2
    exit 1
fi
echo "staged: $(ls .device/bin | tr '\n' ' ')| $(ls .device/scenes | wc -l) scenes |" \
     "$(ls .device/debs | wc -l) debs | commit $commit | $(du -sm .device | cut -f1) MB"
echo "next: run tests/gpu.sh OUTDIR on the H100"
