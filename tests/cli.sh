#!/bin/sh
# cli.sh VREUSE - end-to-end checks of the command line (placeholder)
exit 0
