/* info_cmd.c - `vreuse info` (placeholder). */
#include "../pipeline/commands.h"
#include <stdio.h>
int vr_cmd_info(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "info: not yet\n"); return 1; }
