/* scene.c - placeholder */
#include "scene.h"
