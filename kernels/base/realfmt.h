/* realfmt.h -- how many significant digits a double needs in text.
 *
 * The JSON the project writes (request bodies, documents) prints reals with
 * 15 significant digits when every one of them reads back exactly, so a
 * body says 0.005 rather than 0.0050000000000000001, and with 17 (always
 * exact) otherwise. Whether 15 suffice is decided here, once, for every
 * writer.
 */
#ifndef DV_REALFMT_H
#define DV_REALFMT_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when %.15g of `v` parses back to exactly `v`; 0 otherwise (NaN never
 * does: it compares equal to nothing). */
int realfmt_exact15(double v);

#ifdef __cplusplus
}
#endif

#endif /* DV_REALFMT_H */
