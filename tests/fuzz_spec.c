/* fuzz_spec.c - libFuzzer target for the scene spec parser (vr_scene_spec_parse, scenes/scene.c).
 * The input up to its first NUL is a spec. Invariants: only VR_OK, VR_ERR_ARG or VR_ERR_IO; a
 * parsed spec is consistent (base and suffix lengths inside the spec and increasing, at most
 * VR_SPEC_MAX_SUBDIVISIONS suffixes, counts in range). Specs that parse to a generator of at most
 * 20k triangles with every @N at most 50k are also loaded (never anything big, never a file):
 * then the scene has at least the largest N triangles. Built only with clang -fsanitize=fuzzer:
 *   fuzz_spec -max_len=256 CORPUS/   (seed: files with specs such as "sphere:1k@2k@4k")
 */
#include <stdlib.h>
#include <string.h>

#include "scenes/scene.h"
#include "scenes/scene_internal.h"

#define SMALL_GENERATOR 20000u
#define SMALL_TARGET 50000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vr_progress_quiet = 1;
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = 0;
    const size_t len = strlen(spec);
    vr_scene_spec sp;
    vr_status s = vr_scene_spec_parse(&sp, spec);
    if (s != VR_OK && s != VR_ERR_ARG && s != VR_ERR_IO)
        abort();
    if (s == VR_OK) {
        if (sp.subdivision_count < 0 || sp.subdivision_count > VR_SPEC_MAX_SUBDIVISIONS ||
            sp.generator < -1 || sp.generator > 2 || sp.base_len == 0 || sp.base_len > len ||
            len > VR_SPEC_MAX_LEN)
            abort();
        if (sp.generator >= 0 && (sp.triangles == 0 || sp.triangles > VR_MAX_TRIANGLES))
            abort();
        uint64_t largest = 0;
        size_t prev = sp.base_len;
        int small = sp.generator >= 0 && sp.triangles <= SMALL_GENERATOR;
        for (int i = 0; i < sp.subdivision_count; ++i) {
            const size_t end = sp.subdivide_len[i];
            if (end <= prev || end > len || spec[prev] != '@' || sp.subdivide_to[i] == 0)
                abort();
            prev = end;
            largest = sp.subdivide_to[i] > largest ? sp.subdivide_to[i] : largest;
            small &= sp.subdivide_to[i] <= SMALL_TARGET;
        }
        if (prev != len)
            abort();
        if (small) {
            vr_scene scene;
            s = vr_scene_load(&scene, spec);
            if (s != VR_OK)
                abort(); /* a small generator spec that parsed must load */
            uint64_t tris = 0;
            for (uint32_t d = 0; d < scene.draw_count; ++d)
                tris += scene.draws[d].mesh.index_count / 3;
            if (tris < largest || strcmp(scene.source, spec) != 0)
                abort();
            vr_scene_free(&scene);
        }
    }
    free(spec);
    return 0;
}
