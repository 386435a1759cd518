/* fuzz_gts_encode.c - libFuzzer target for the GTS encoder (pipeline/gts/gts_encode.c): each
 * input is a small index buffer over few vertices, so shared edges, non-manifold pages,
 * inconsistent orientation, duplicates, degenerate triangles, several components and
 * unreferenced vertices are all common. Byte 0: vertex count (1..64); byte 1: the mode (restart,
 * packing, vertex data); the rest: one byte per index (mod the vertex count).
 * Invariants: the encoder accepts every such mesh; the file validates; the three CPU decoders
 * return exactly the map's triangles; every source triangle appears once, as the same corners up
 * to rotation, and emulation triangles are degenerate; new_of_old inverts old_of_new, unreferenced
 * vertices come last in source order; the vertex data is permuted by old_of_new; an encode
 * without a map writes the same file. Built only with clang -fsanitize=fuzzer:
 *   fuzz_gts_encode -max_len=4096 CORPUS/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"

/* Image of the file, malloc'd; NULL (and abort) when it cannot be written. */
static uint8_t *file_image(const vr_gts *g, size_t *bytes)
{
    *bytes = vr_gts_file_bytes(g);
    uint8_t *img = malloc(*bytes);
    size_t written = 0;
    if (!img || vr_gts_write_memory(img, *bytes, &written, g) != VR_OK || written != *bytes)
        abort();
    return img;
}

static int same_up_to_rotation(const uint32_t a[3], const uint32_t b[3])
{
    for (int r = 0; r < 3; ++r)
        if (a[0] == b[r] && a[1] == b[(r + 1) % 3] && a[2] == b[(r + 2) % 3])
            return 1;
    return 0;
}

static void check_map(const vr_gts *g, const vr_gts_map *map, const vr_mesh *m)
{
    const uint32_t n = m->index_count / 3, vc = m->vertex_count, strips = map->strip_triangle_count;
    const size_t words = 3 * (size_t)strips;
    uint32_t *got = malloc((words ? words : 1) * sizeof *got);
    uint8_t *seen = calloc(n, 1), *referenced = calloc(vc, 1);
    if (!got || !seen || !referenced)
        abort();
    if (vr_gts_decode_ref(got, g) || memcmp(got, map->indices, words * sizeof *got) ||
        vr_gts_decode_scan_ref(got, g) || memcmp(got, map->indices, words * sizeof *got) ||
        vr_gts_decode_tiled_ref(got, g) || memcmp(got, map->indices, words * sizeof *got))
        abort();
    for (uint32_t v = 0; v < vc; ++v)
        if (map->old_of_new[v] >= vc || map->new_of_old[map->old_of_new[v]] != v)
            abort();
    for (uint32_t i = 0; i < 3 * n; ++i)
        referenced[m->indices[i]] = 1;
    for (uint32_t v = g->referenced_count; v < vc; ++v) /* unreferenced last, in source order */
        if (referenced[map->old_of_new[v]] ||
            (v > g->referenced_count && map->old_of_new[v] < map->old_of_new[v - 1]))
            abort();
    for (uint32_t i = 0; i < strips; ++i) {
        const uint32_t *t = map->indices + 3 * (size_t)i, src = map->triangle_source[i];
        if (src == VR_GTS_EMULATED) {
            if (g->restart != VR_GTS_RESTART_DEGENERATE ||
                (t[0] != t[1] && t[1] != t[2] && t[2] != t[0]))
                abort();
            continue;
        }
        if (src >= n || seen[src]++)
            abort();
        uint32_t want[3];
        for (int k = 0; k < 3; ++k)
            want[k] = map->new_of_old[m->indices[3 * (size_t)src + k]];
        if (!same_up_to_rotation(t, want))
            abort();
    }
    for (uint32_t t = 0; t < n; ++t)
        if (!seen[t])
            abort();
    if (g->positions)
        for (uint32_t v = 0; v < vc; ++v)
            if (memcmp(g->positions + 3 * (size_t)v,
                       m->positions + 3 * (size_t)map->old_of_new[v], 3 * sizeof(float)))
                abort();
    free(got);
    free(seen);
    free(referenced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    const uint32_t vc = 1 + data[0] % 64, mode = data[1], n = (uint32_t)(size - 2) / 3;
    uint32_t *idx = malloc(3 * (size_t)n * sizeof *idx);
    float *pos = malloc(3 * (size_t)vc * sizeof *pos);
    if (!idx || !pos)
        abort();
    for (uint32_t i = 0; i < 3 * n; ++i)
        idx[i] = data[2 + i] % vc;
    for (uint32_t i = 0; i < 3 * vc; ++i)
        pos[i] = (float)i;
    vr_mesh m;
    memset(&m, 0, sizeof m);
    m.vertex_count = vc;
    m.index_count = 3 * n;
    m.indices = idx;
    m.positions = pos;
    vr_gts_options o = vr_gts_options_default();
    o.restart = (mode & 1) ? VR_GTS_RESTART_CODE : VR_GTS_RESTART_DEGENERATE;
    o.packing = (mode & 2) ? VR_GTS_PACK_GREEDY : VR_GTS_PACK_OPTIMAL;
    o.keep_vertex_data = !(mode & 4);
    vr_gts g, g2;
    vr_gts_map map;
    if (vr_gts_encode(&g, &map, &m, &o) != VR_OK || vr_gts_validate(&g, "fuzz") != VR_OK)
        abort();
    check_map(&g, &map, &m);
    if (vr_gts_encode(&g2, NULL, &m, &o) != VR_OK)
        abort();
    size_t b1, b2;
    uint8_t *i1 = file_image(&g, &b1), *i2 = file_image(&g2, &b2);
    if (b1 != b2 || memcmp(i1, i2, b1))
        abort();
    free(i1);
    free(i2);
    vr_gts_free(&g);
    vr_gts_free(&g2);
    vr_gts_map_free(&map);
    free(idx);
    free(pos);
    return 0;
}
