/* library.c - what only the installed library adds to the layers below the command line
 * (pipeline/lib/CMakeLists.txt builds libvreuse.so and libvreuse.a from them): vr_version, and in
 * a build without CUDA the batchers' GPU entry points, which the public header declares for
 * every build and which then return VR_ERR_NO_DEVICE (the project's own executables reach the
 * batchers through vr_reuse_all, whose `run` is NULL there). Compiled against the generated
 * public header, so a declaration it lost fails here first.
 * Try: `ctest -R library` (installs, builds tests/example/example.c both ways, checks nm -D).
 */
#include <vreuse.h>

uint32_t vr_version(void) { return VR_VERSION; }

#ifndef VR_HAVE_CUDA
#define VR_NO_GPU_RUN(name)                                                                     \
    vr_status vr_##name##_run(const vr_reuse_params *p)                                         \
    {                                                                                           \
        (void)p;                                                                                \
        return vr_set_error(VR_ERR_NO_DEVICE, "%s: %s", #name, vr_gpu_device_name());           \
    }
VR_NO_GPU_RUN(naive)
VR_NO_GPU_RUN(warp)
VR_NO_GPU_RUN(hash)
VR_NO_GPU_RUN(phash)
VR_NO_GPU_RUN(sort)
VR_NO_GPU_RUN(multi)
VR_NO_GPU_RUN(patch)
VR_NO_GPU_RUN(meshlet)
#endif
