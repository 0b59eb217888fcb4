/* realfmt.c -- whether 15 significant digits give a double back (realfmt.h). */
#include "kernels/base/realfmt.h"

#include <stdio.h>
#include <stdlib.h>

int realfmt_exact15(double v) {
    char buf[40]; /* "-1.23456789012345e-308" and then some */
    snprintf(buf, sizeof buf, "%.15g", v);
    return strtod(buf, NULL) == v;
}
