/* commands.h - the subcommands of `vreuse`, one file each in pipeline/cli/ (tour_cmd.c,
 * info_cmd.c, sim_cmd.c, ...); main.c's table lists them. Each returns the process exit code:
 * 0 success, 1 failure (message already printed), 2 usage error. */
#ifndef VR_COMMANDS_H
#define VR_COMMANDS_H

#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

int vr_cmd_tour(int argc, char **argv);  /* argv[0] == "tour"; bare `vreuse` */
int vr_cmd_info(int argc, char **argv);  /* argv[0] == "info" */
int vr_cmd_sim(int argc, char **argv);   /* argv[0] == "sim" */
int vr_cmd_bench(int argc, char **argv); /* argv[0] == "bench" */
int vr_cmd_render(int argc, char **argv); /* argv[0] == "render" */
int vr_cmd_compress(int argc, char **argv); /* argv[0] == "compress" */
int vr_cmd_bench_gts(int argc, char **argv); /* argv[0] == "bench-gts" */
int vr_cmd_bench_compact(int argc, char **argv); /* argv[0] == "bench-compact" */
int vr_cmd_view(int argc, char **argv);   /* argv[0] == "view"; built with VR_HAVE_SDL2 */
int vr_cmd_plot_bench(int argc, char **argv); /* argv[0] == "plot-bench" */
int vr_cmd_export(int argc, char **argv);     /* argv[0] == "export" */
int vr_cmd_dice(int argc, char **argv);       /* argv[0] == "dice" */
int vr_cmd_apply(int argc, char **argv);      /* argv[0] == "apply" */

/* render_cmd.c, for view's screenshots too: writes an RGBA image (row 0 at the top) to `path`
 * as PNG through vr_cli_write_via (a temporary renamed into place, never over an input);
 * messages name `path` and `what` ("PNG", "screenshot"). */
vr_status vr_cmd_write_png(const char *path, const char *what, const uint8_t *rgba,
                           uint32_t width, uint32_t height);

#ifdef __cplusplus
}
#endif
#endif
