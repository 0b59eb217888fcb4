/* test_session_masks.c -- the session's path masks (gpu/session.h), host
 * side only (no device mask is asked for, so no CUDA call is made and no
 * GPU is needed): a table holds pointers to its rows' masks until its
 * checks end, so making room for one row's mask must never free another's
 * of the same table. A batch of readers' union table (16 rows, most of them
 * new, one of them the baseline every earlier job made) is where a mask
 * made long ago and asked for again came next in line to be replaced. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/session.h"

static unsigned builds;

static uint32_t *build(const struct dv_row *row, const struct dv_geometry *g, char *err) {
    (void)row, (void)g, (void)err;
    builds++;
    return calloc(4, sizeof(uint32_t));
}

static const uint32_t *mask_of(struct session *s, const char *name) {
    static struct dv_row row;
    memset(&row, 0, sizeof row);
    row.kernel = DV_KERNEL_MASK;
    row.mode = DV_MODE_NONE;
    snprintf(row.name, sizeof row.name, "%s", name);
    const struct dv_geometry g = {64, 256, 1};
    int rc = 0;
    char err[ERR_LEN];
    const uint32_t *m = session_mask(s, &row, &g, build, NULL, &rc, err);
    cr_assert_not_null(m, "%s", err);
    return m;
}

/* 32 masks made (the table full), then a table of 16 rows whose first is
 * the oldest of them and whose 15 others are new: its first row's mask is
 * still the one the table holds at the end. */
Test(session_masks, a_table_never_loses_a_mask_it_holds) {
    struct session *s = session_create();
    cr_assert_not_null(s);
    char name[32];
    for (unsigned i = 0; i < 32; i++) {
        snprintf(name, sizeof name, "old-%u", i);
        mask_of(s, name);
    }
    const uint32_t *held = mask_of(s, "old-0");
    const unsigned before = builds;
    for (unsigned i = 0; i < 15; i++) {
        snprintf(name, sizeof name, "new-%u", i);
        mask_of(s, name);
    }
    cr_expect_eq(builds, before + 15, "each new row built once");
    cr_expect_eq(mask_of(s, "old-0"), held, "the table's first row lost its mask to a later row's");
    cr_expect_eq(builds, before + 15, "the first row's mask was made again");
    session_free(s);
}
