/* multi.cu - GPU batcher (placeholder); CPU twin: multi_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_multi_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "multi: GPU path not implemented yet");
}
