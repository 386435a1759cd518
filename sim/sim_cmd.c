/* sim_cmd.c - `vreuse sim` (placeholder). */
#include "../pipeline/commands.h"
#include <stdio.h>
int vr_cmd_sim(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "sim: not yet\n"); return 1; }
