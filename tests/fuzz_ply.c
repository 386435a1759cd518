/* fuzz_ply.c - libFuzzer target for the PLY reader (scenes/load_ply.c) on file images in memory
 * (vr_ply_load_memory). Each input is read twice: with repairs refused and accepted. Invariants:
 * only VR_OK or VR_ERR_FORMAT; what the strict read accepts, the repairing read accepts the same
 * (indices, positions and normals bit for bit, nothing repaired); an accepted mesh is finished
 * (a multiple of 3 indices, all < vertex_count, finite positions, unit normals). Built only with
 * clang -fsanitize=fuzzer:
 *   fuzz_ply -max_len=65536 -close_fd_mask=2 CORPUS/   (seed: the .ply files of ../shared/scenes)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenes/scene.h"
#include "scenes/scene_internal.h"

static int same_mesh(const vr_mesh *a, const vr_mesh *b)
{
    return a->vertex_count == b->vertex_count && a->index_count == b->index_count &&
           !memcmp(a->indices, b->indices, (size_t)a->index_count * sizeof *a->indices) &&
           !memcmp(a->positions, b->positions, (size_t)a->vertex_count * 3 * sizeof(float)) &&
           !memcmp(a->normals, b->normals, (size_t)a->vertex_count * 3 * sizeof(float)) &&
           !a->texcoords == !b->texcoords;
}

static void check_finished(const vr_mesh *m)
{
    if (m->index_count == 0 || m->index_count % 3 || !m->positions || !m->normals || !m->indices)
        abort();
    for (uint32_t i = 0; i < m->index_count; ++i)
        if (m->indices[i] >= m->vertex_count)
            abort();
    for (size_t v = 0; v < 3 * (size_t)m->vertex_count; v += 3) {
        const float *p = m->positions + v, *n = m->normals + v;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            abort();
        if (fabsf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0f) > 1e-3f)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vr_progress_quiet = 1;
    vr_mesh strict, repaired;
    vr_scene repairs;
    memset(&repairs, 0, sizeof repairs);
    vr_scene_set_accept_repairs(0);
    const vr_status s = vr_ply_load_memory(&strict, data, size, "fuzz", NULL);
    vr_scene_set_accept_repairs(1);
    const vr_status r = vr_ply_load_memory(&repaired, data, size, "fuzz", &repairs);
    vr_scene_set_accept_repairs(0);
    if ((s != VR_OK && s != VR_ERR_FORMAT) || (r != VR_OK && r != VR_ERR_FORMAT))
        abort();
    if (s == VR_OK && (r != VR_OK || repairs.repaired || !same_mesh(&strict, &repaired)))
        abort();
    if (r == VR_OK)
        check_finished(&repaired);
    if (s == VR_OK)
        vr_mesh_free(&strict);
    if (r == VR_OK)
        vr_mesh_free(&repaired);
    return 0;
}
