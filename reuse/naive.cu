/* naive.cu - GPU batcher (placeholder); CPU twin: naive_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_naive_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "naive: GPU path not implemented yet");
}
