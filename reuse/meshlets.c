/* meshlets.c - meshoptimizer's meshlets as a static batch plan (reuse/patches.h): clusters of at
 * most 255 vertices / 512 triangles grown by meshopt_buildMeshlets (meshoptimizer 0.18: greedy,
 * topology first, then distance to the cluster's centre; a k-d tree finds the next start), the
 * clusters mesh shaders draw. meshoptimizer returns each meshlet as a vertex list plus local
 * corners; the corners come back in the source triangle's order, so a table keyed by the corner
 * triple finds each source triangle again (identical triangles are taken in id order). The only
 * file of reuse/ that sees meshoptimizer. Try: `vreuse_tests reuse/plan`,
 * `vreuse sim sphere --nu 64 --max-indices 372` (the mesh-shader default 64 / 124).
 */
#include "reuse/patches.h"

#include <assert.h>
#include <meshoptimizer.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/vr_mem.h"

#define VR_MESHLET_MAX_VERTICES 255u  /* meshoptimizer: "max_vertices <= 255 - not 256!" */
#define VR_MESHLET_MAX_TRIANGLES 512u /* meshoptimizer's limit */
#define VR_MESHLET_TRIANGLE_STEP 4u   /* meshoptimizer: max_triangles % 4 == 0 */

void vr_meshlet_limits(uint32_t *max_vertices, uint32_t *max_triangles, uint32_t max_unique,
                       uint32_t max_indices)
{
    assert(max_vertices && max_triangles);
    uint32_t t = max_indices / 3;
    if (t > VR_MESHLET_MAX_TRIANGLES)
        t = VR_MESHLET_MAX_TRIANGLES;
    t -= t % VR_MESHLET_TRIANGLE_STEP;
    *max_triangles = t < VR_MESHLET_TRIANGLE_STEP ? VR_MESHLET_TRIANGLE_STEP : t;
    *max_vertices = max_unique < VR_MESHLET_MAX_VERTICES ? max_unique : VR_MESHLET_MAX_VERTICES;
}

/* Source triangles by corner triple: an open-addressing table of the distinct triples. Slot s
 * holds the triple's first copy (key, the one compared) and its lowest copy not matched yet
 * (head); the copies of one triple are chained in id order (dup), so matching stays O(1)
 * however many copies there are. */
typedef struct vr_tri_table {
    uint32_t *key;  /* 2^log2 slots: first copy + 1, 0 when empty */
    uint32_t *head; /* 2^log2 slots: next unmatched copy, ~0 when all are matched */
    uint32_t *last; /* 2^log2 slots: last copy chained so far (while building) */
    uint32_t *dup;  /* triangles: the next copy of the same triple, ~0 after the last */
    uint32_t log2;
    const uint32_t *idx;
} vr_tri_table;

static uint32_t vr_tri_hash(const uint32_t *c, uint32_t log2)
{
    uint64_t h = c[0] * 0x9e3779b97f4a7c15ull;
    h ^= (h >> 29) + c[1] * 0xbf58476d1ce4e5b9ull;
    h ^= (h >> 31) + c[2] * 0x94d049bb133111ebull;
    h ^= h >> 32;
    return (uint32_t)(h * 0x9e3779b97f4a7c15ull >> (64 - log2));
}

/* The slot of triple c: its own, or the empty one where it goes. */
static uint32_t vr_tri_find(const vr_tri_table *t, const uint32_t *c)
{
    const uint32_t mask = (1u << t->log2) - 1;
    uint32_t s = vr_tri_hash(c, t->log2);
    for (; t->key[s]; s = (s + 1) & mask) {
        const uint32_t *d = t->idx + 3 * (size_t)(t->key[s] - 1);
        if (d[0] == c[0] && d[1] == c[1] && d[2] == c[2])
            break;
    }
    return s;
}

vr_status vr_meshlets_build(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                            const float *positions, uint32_t vertex_count, uint32_t max_unique,
                            uint32_t max_indices)
{
    assert(out && (indices || index_count == 0));
    vr_status st = vr_batch_plan_begin(out, index_count, max_unique, max_indices, "meshlets");
    if (st != VR_OK || index_count == 0)
        return st;
    const uint32_t F = index_count / 3, max_faces = max_indices / 3;
    assert(positions);
    uint32_t mv, mt;
    vr_meshlet_limits(&mv, &mt, max_unique, max_indices);
    const size_t bound = meshopt_buildMeshletsBound(index_count, mv, mt);
    struct meshopt_Meshlet *meshlets = malloc(bound * sizeof *meshlets);
    unsigned int *mverts = malloc(bound * mv * sizeof *mverts);
    unsigned char *mtris = malloc(bound * mt * 3);
    uint32_t *batch_of = malloc((size_t)F * sizeof *batch_of); /* batch of each triangle */
    vr_tri_table tab = {NULL, NULL, NULL, malloc((size_t)F * sizeof(uint32_t)), 1, indices};
    while ((1u << tab.log2) < 2u * F && tab.log2 < 31)
        ++tab.log2;
    const size_t slots = (size_t)1 << tab.log2;
    tab.key = calloc(slots, sizeof *tab.key);
    tab.head = malloc(slots * sizeof *tab.head);
    tab.last = malloc(slots * sizeof *tab.last);
    if (!meshlets || !mverts || !mtris || !batch_of || !tab.dup || !tab.key || !tab.head ||
        !tab.last) {
        st = VR_ERROR(VR_ERR_OOM, "meshlets: %zu meshlets of %u vertices for %u triangles",
                      bound, mv, F);
        goto done;
    }
    const size_t count = meshopt_buildMeshlets(meshlets, mverts, mtris, indices, index_count,
                                               positions, vertex_count, 3 * sizeof(float), mv,
                                               mt, 0.0f);

    for (uint32_t t = 0; t < F; ++t) {
        const uint32_t s = vr_tri_find(&tab, indices + 3 * (size_t)t);
        tab.dup[t] = ~0u;
        batch_of[t] = ~0u;
        if (!tab.key[s]) {
            tab.key[s] = t + 1;
            tab.head[s] = t;
        } else {
            tab.dup[tab.last[s]] = t;
        }
        tab.last[s] = t;
    }
    /* match: each meshlet's triangles take the lowest unmatched copy of their triple. Batches
     * are the meshlets, cut into runs of max_faces when that is below meshoptimizer's 4. */
    uint32_t batches = 0;
    for (size_t k = 0; k < count && st == VR_OK; ++k) {
        const struct meshopt_Meshlet *ml = &meshlets[k];
        for (uint32_t j = 0; j < ml->triangle_count; ++j) {
            if (j % max_faces == 0)
                ++batches;
            uint32_t c[3];
            for (int i = 0; i < 3; ++i)
                c[i] = mverts[ml->vertex_offset + mtris[ml->triangle_offset + 3 * j + i]];
            const uint32_t s = vr_tri_find(&tab, c);
            if (!tab.key[s] || tab.head[s] == ~0u) {
                st = VR_ERROR(VR_ERR_FORMAT, "meshlets: meshoptimizer returned triangle (%u %u "
                              "%u) more often than the mesh holds it", c[0], c[1], c[2]);
                break;
            }
            const uint32_t t = tab.head[s];
            batch_of[t] = batches - 1;
            tab.head[s] = tab.dup[t];
        }
        out->split += ml->triangle_count > max_faces;
    }
    for (uint32_t t = 0; t < F && st == VR_OK; ++t)
        if (batch_of[t] == ~0u)
            st = VR_ERROR(VR_ERR_FORMAT, "meshlets: meshoptimizer left triangle %u out", t);
    if (st != VR_OK)
        goto done;

    /* the plan: a counting sort of the triangles by batch, ascending inside a batch */
    out->tri_order = malloc((size_t)F * sizeof *out->tri_order);
    out->starts = calloc((size_t)batches + 1, sizeof *out->starts);
    if (!out->tri_order || !out->starts) {
        st = VR_ERROR(VR_ERR_OOM, "meshlets: plan of %u triangles", F);
        goto done;
    }
    for (uint32_t t = 0; t < F; ++t)
        ++out->starts[batch_of[t] + 1];
    for (uint32_t b = 0; b < batches; ++b)
        out->starts[b + 1] += out->starts[b];
    for (uint32_t t = 0; t < F; ++t)
        out->tri_order[out->starts[batch_of[t]]++] = t;
    for (uint32_t b = batches; b > 0; --b)
        out->starts[b] = 3 * out->starts[b - 1];
    out->starts[0] = 0;
    out->triangle_count = F;
    out->batch_count = batches;
    out->group_count = (uint32_t)count;
done:
    {
        void *const bufs[] = {meshlets, mverts,   mtris,    batch_of,
                              tab.dup,  tab.key, tab.head, tab.last};
        vr_free_all(bufs, VR_COUNT_OF(bufs));
    }
    if (st != VR_OK)
        vr_batch_plan_free(out);
    return st;
}
