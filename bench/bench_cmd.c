/* bench_cmd.c - `vreuse bench` (placeholder). */
#include "../pipeline/commands.h"
#include <stdio.h>
int vr_cmd_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "bench: not yet\n"); return 1; }
