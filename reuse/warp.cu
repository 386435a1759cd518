/* warp.cu - GPU batcher (placeholder); CPU twin: warp_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_warp_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "warp: GPU path not implemented yet");
}
