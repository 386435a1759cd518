/* sort.cu - GPU batcher (placeholder); CPU twin: sort_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_sort_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "sort: GPU path not implemented yet");
}
