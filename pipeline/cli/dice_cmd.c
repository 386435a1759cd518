/* dice_cmd.c - `vreuse dice SCENE [--volume N] [-o points.ply] [--cpu] [--png F] [--csv F]`: the
 * paper's Dicer (raster/dice.h): the scene fitted into the unit cube, rendered into the N slices
 * of an N^3 volume by the geometry stage and the rasterizer, each slice's covered cells listed by
 * a HistoPyramid; prints the point count and the time per slice, writes the points as PLY
 * (x y z float, the cell centres in the scene's frame) and a picture of the cloud.
 * Try: `vreuse dice ../shared/scenes/teapot.obj -o teapot.ply --png teapot.png`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/mesh_write.h"
#include "raster/dice.h"
#include "pipeline/stage/geometry.h"
#include "scenes/scene.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DICE_PNG_SIZE 768u /* pixels per side of --png */

typedef struct ply_job {
    const float *xyz;
    uint32_t count;
    const char *comment;
} ply_job;

/* vr_cli_write_via's writer: the points into the temporary it names */
static vr_status write_points(const char *file, void *ctx)
{
    const ply_job *j = (const ply_job *)ctx;
    return vr_points_write_ply(file, j->xyz, j->count, j->comment);
}

static const vr_cli_command g_cmd = {
    "dice", "SCENE",
    "The paper's Dicer (Ziegler et al., HistoPyramids): fits SCENE into the unit cube, renders\n"
    "it into the N slices of an N x N x N volume with vreuse's geometry stage and rasterizer\n"
    "(orthographic along z, near/far at the slice's bounds, no culling) and lists each\n"
    "slice's covered cells with a HistoPyramid: the surface voxels as a point cloud. A cell\n"
    "is covered when the line along z through its centre crosses the surface inside the\n"
    "slice (walls parallel to z are met only at their edges, as in the paper).\n"
    "Prints the points and the time per slice; -o writes them as PLY (x y z float, cell\n"
    "centres in the scene's frame), --png draws them. Without a CUDA device (or with --cpu)\n"
    "the CPU twins run, with the same points in the same order.",
    NULL, VR_CLI_ONE_SCENE};

int vr_cmd_dice(int argc, char **argv)
{
    uint32_t volume = VR_DICE_VOLUME_DEFAULT;
    const char *out = NULL, *png = NULL, *csv_path = NULL;
    int force_cpu = 0;
    const vr_cli_opt opts[] = {
        {"volume", 0, "N", "slices and cells per side, 8..2048 (default 256, the paper's)",
         vr_cli_parse_u32, &volume, 0, VR_DICE_VOLUME_MIN, VR_DICE_VOLUME_MAX, 0, NULL},
        VR_CLI_OUT(&out, "write the points to FILE.ply (binary PLY, vertex x y z float)"),
        {"png", 0, "FILE", "draw the point cloud (768 x 768, shaded by depth) to FILE",
         vr_cli_parse_path, &png, 0, 0, 0, 0, NULL},
        VR_CLI_CSV(&csv_path),
        VR_CLI_CPU(&force_cpu),
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (out && strcmp(out, "-") != 0) {
        const char *dot = strrchr(out, '.');
        if (!dot || strchr(dot, '/') || strcasecmp(dot, ".ply") != 0)
            return vr_cli_fail(VR_CLI_USAGE, "dice", "-o '%s': the points are written as PLY; "
                               "name the file *.ply", out);
    }
    if (out && !strcmp(out, "-"))
        return vr_cli_fail(VR_CLI_USAGE, "dice", "-o -: the PLY is binary; name a file *.ply");
    /* every output checked before the scene loads and the slices are rendered */
    if ((out && vr_cli_out_check(out, "PLY") != VR_OK) ||
        (png && vr_cli_out_check(png, "PNG") != VR_OK))
        return vr_cli_fail_last("dice");
    vr_cli_out csv = {0};
    if (csv_path && vr_cli_out_open(&csv, csv_path, "CSV", 0) != VR_OK)
        return vr_cli_fail_last("dice");

    const char *spec = args.v[0];
    vr_mesh m;
    if (vr_mesh_load(&m, spec) != VR_OK) {
        vr_cli_out_abort(&csv);
        return vr_cli_fail_last("dice");
    }
    const int gpu = !force_cpu && vr_gpu_available();
    FILE *log = csv.is_stdout ? stderr : stdout;
    if (gpu)
        fprintf(log, "vreuse dice: device %s (GPU geometry stage, rasterizer, HistoPyramid)\n",
                vr_gpu_device_name());
    else if (force_cpu)
        fprintf(log, "vreuse dice: device CPU twins (--cpu)\n");
    else
        fprintf(log, "vreuse dice: device CPU twins; %s\n", vr_gpu_device_name());

    vr_dice_result r;
    float *xyz = NULL;
    uint8_t *rgba = NULL;
    int rc = 1;
    const double t0 = vr_now_ms();
    if (vr_dice(&r, &m, volume, gpu) != VR_OK) {
        rc = vr_cli_fail_last("dice");
        goto done;
    }
    const double wall = vr_now_ms() - t0;
    double sum = 0, lo = r.slice_ms[0], hi = r.slice_ms[0];
    for (uint32_t k = 0; k < volume; ++k) {
        sum += r.slice_ms[k];
        lo = r.slice_ms[k] < lo ? r.slice_ms[k] : lo;
        hi = r.slice_ms[k] > hi ? r.slice_ms[k] : hi;
    }
    const char *label = vr_cli_scene_label(spec);
    fprintf(log, "  %s: %u triangles, volume %u^3: %u points\n", label, m.index_count / 3,
            volume, r.count);
    fprintf(log, "  per slice (%s): %.3f ms mean, %.3f min, %.3f max; %u slices %.1f ms "
            "(wall %.1f ms)\n", gpu ? "cudaEvents: geometry + raster + HistoPyramid" : "wall clock",
            sum / volume, lo, hi, volume, sum, wall);

    if (out) {
        xyz = malloc((size_t)r.count * 3 * sizeof *xyz + 1);
        if (!xyz) {
            rc = vr_cli_fail(1, "dice", "out of memory for %u points", r.count);
            goto done;
        }
        vr_dice_positions(xyz, &r);
        char comment[256];
        snprintf(comment, sizeof comment, "vreuse dice of %s, volume %u: surface cell centres",
                 label, volume);
        ply_job job = {xyz, r.count, comment};
        if (vr_cli_write_via(out, "PLY", write_points, &job) != VR_OK) {
            rc = vr_cli_fail_last("dice");
            goto done;
        }
        fprintf(log, "  points -> %s\n", out);
    }
    if (png) {
        rgba = malloc((size_t)DICE_PNG_SIZE * DICE_PNG_SIZE * 4);
        if (!rgba) {
            rc = vr_cli_fail(1, "dice", "out of memory for the picture");
            goto done;
        }
        vr_dice_splat(rgba, DICE_PNG_SIZE, &r);
        if (vr_cmd_write_png(png, "PNG", rgba, DICE_PNG_SIZE, DICE_PNG_SIZE) != VR_OK) {
            rc = vr_cli_fail_last("dice");
            goto done;
        }
        fprintf(log, "  picture -> %s\n", png);
    }
    if (csv.f) {
        fprintf(csv.f, "scene,tris,volume,device,points,ms_per_slice_mean,ms_per_slice_min,"
                "ms_per_slice_max,ms_total\n");
        vr_cli_csv_field(csv.f, label);
        fprintf(csv.f, ",%u,%u,%s,%u,%.4f,%.4f,%.4f,%.3f\n", m.index_count / 3, volume,
                gpu ? "gpu" : "cpu", r.count, sum / volume, lo, hi, sum);
        if (vr_cli_out_close(&csv) != VR_OK) {
            rc = vr_cli_fail_last("dice");
            goto done;
        }
    }
    rc = 0;
done:
    vr_cli_out_abort(&csv);
    vr_dice_result_free(&r);
    vr_mesh_free(&m);
    free(xyz);
    free(rgba);
    return rc;
}
