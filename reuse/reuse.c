/* reuse.c - the strategy registry, in vr_reuse_kind order. To add a strategy: add name.cu and
 * name_ref.c, one row here, and run `vreuse_tests reuse/`. */
#include "reuse/reuse.h"
#include "reuse/dyn_ref_common.h" /* vr_plan_cluster_cull */

#include <string.h>

#ifdef VR_HAVE_CUDA
#define VR_GPU(f) f
#else
#define VR_GPU(f) NULL
#endif

/* Every strategy but multi (and the plans when culling clusters) keeps its working state in
 * registers and shared memory. */
static size_t vr_no_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

/* patch and meshlet: with cluster culling, the pre-pass's flag per batch (reuse/plan.cuh). */
static size_t vr_plan_temp_bytes(const vr_reuse_params *p)
{
    return vr_plan_cluster_cull(p) ? (size_t)p->batch_count * sizeof(uint32_t) : 0;
}

/* The static plans of patch and meshlet, from a mesh. */
static vr_status vr_patch_plan(vr_batch_plan *out, const vr_mesh *m, uint32_t max_unique,
                               uint32_t max_indices, int patch_builder)
{
    return patch_builder == VR_PATCH_BUILDER_GPU
               ? vr_patches_build_gpu_ref(out, m->indices, m->index_count, m->vertex_count,
                                          max_unique, max_indices)
               : vr_patches_build(out, m->indices, m->index_count, m->vertex_count, max_unique,
                                  max_indices);
}

static vr_status vr_meshlet_plan(vr_batch_plan *out, const vr_mesh *m, uint32_t max_unique,
                                 uint32_t max_indices, int patch_builder)
{
    (void)patch_builder;
    return vr_meshlets_build(out, m->indices, m->index_count, m->positions, m->vertex_count,
                             max_unique, max_indices);
}

#define VR_ROW(n, kind, dyn, gts, plan, temp_bytes) \
    { #n, kind, dyn, gts, plan, temp_bytes, VR_GPU(vr_##n##_run), vr_##n##_ref }

const vr_reuse_ops vr_reuse_all[VR_REUSE_KIND_COUNT] = {
    VR_ROW(naive, VR_REUSE_NAIVE, 0, 0, NULL, vr_no_temp_bytes),
    VR_ROW(warp, VR_REUSE_WARP, 0, 0, NULL, vr_no_temp_bytes),
    VR_ROW(hash, VR_REUSE_HASH, 1, 1, NULL, vr_no_temp_bytes),
    VR_ROW(phash, VR_REUSE_PHASH, 1, 0, NULL, vr_no_temp_bytes),
    VR_ROW(sort, VR_REUSE_SORT, 1, 0, NULL, vr_no_temp_bytes),
    VR_ROW(multi, VR_REUSE_MULTI, 0, 0, NULL, vr_multi_temp_bytes),
    VR_ROW(patch, VR_REUSE_PATCH, 0, 0, vr_patch_plan, vr_plan_temp_bytes),
    VR_ROW(meshlet, VR_REUSE_MESHLET, 0, 0, vr_meshlet_plan, vr_plan_temp_bytes),
};

const vr_reuse_ops *vr_reuse_find(const char *name)
{
    for (int i = 0; i < VR_REUSE_KIND_COUNT; ++i)
        if (strcmp(vr_reuse_all[i].name, name) == 0)
            return &vr_reuse_all[i];
    return NULL;
}

const char *const vr_queue_mode_names[VR_QUEUE_MODE_COUNT] = {"ink", "collate", "atomic", "cub",
                                                                "hp"};

vr_reuse_params vr_reuse_params_default(void)
{
    vr_reuse_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 4; ++i)
        p.shader.mvp[i * 5] = 1.0f;
    for (int i = 0; i < 3; ++i)
        p.shader.normal_matrix[i * 4] = 1.0f;
    p.block_size = 256;
    p.batch_indices = VR_WARP_BATCH_DEFAULT;
    p.max_unique = VR_NU_DEFAULT;
    p.max_indices = VR_MAX_INDICES_DEFAULT;
    p.queue_store = 1;
    return p;
}

vr_reuse_params vr_reuse_params_input(const vr_reuse_params *cfg, const uint32_t *indices,
                                      uint32_t index_count, const float *positions,
                                      const float *normals, uint32_t vertex_count)
{
    vr_reuse_params p = *cfg;
    p.indices = indices;
    p.index_count = index_count;
    p.positions = positions;
    p.normals = normals;
    p.vertex_count = vertex_count;
    p.batch_starts = NULL;
    p.batch_count = 0;
    p.tri_ids = NULL;
    p.cluster_bounds = NULL;
    return p;
}

const char *const vr_load_names[VR_LOAD_COUNT] = {"simple", "light", "medium", "heavy"};
const uint32_t vr_load_iterations[VR_LOAD_COUNT] = {0, 1200, 2336, 4416};

vr_status vr_load_parse(const char *s, uint32_t *iterations)
{
    for (int i = 0; i < VR_LOAD_COUNT; ++i)
        if (!strcmp(s, vr_load_names[i])) {
            *iterations = vr_load_iterations[i];
            return VR_OK;
        }
    const char *count = !strncmp(s, "loop:", 5) ? s + 5 : s;
    uint64_t n = 0;
    if (strcmp(count, "0") != 0 && vr_parse_count(count, &n) != VR_OK)
        return vr_set_error(VR_ERR_ARG, "unknown load '%.40s' (simple, light, medium, heavy, "
                            "loop:N or N FMA steps, N <= %u)", s, VR_LOAD_MAX);
    if (n > VR_LOAD_MAX)
        return vr_set_error(VR_ERR_ARG, "load '%.40s': %llu FMA steps, at most %u", s,
                            (unsigned long long)n, VR_LOAD_MAX);
    *iterations = (uint32_t)n;
    return VR_OK;
}

const char *vr_load_name(uint32_t iterations)
{
    for (int i = 0; i < VR_LOAD_COUNT; ++i)
        if (vr_load_iterations[i] == iterations)
            return vr_load_names[i];
    return NULL;
}
