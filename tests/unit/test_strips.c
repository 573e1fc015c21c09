/*
 * test_strips.c — the strip planner (src/engine/strips.c), against a brute-force
 * walk over every row the Sobel and blur taps of a strip's outputs reach
 * (written here from DESIGN.md §1.4, with the reference's border rule, not from
 * strips.c or border.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "edge.h"
#include "reference.h"
#include "strips.h"

/* The input rows output rows [y0, y1) need, by walking the dependencies:
 * Sobel row y reads blurred rows map(y-1), y, map(y+1); the blurred value
 * of (mapped) row m reads grey rows map(m + k), |k| <= r. */
static void need(int y0, int y1, int h, int r, int border, int *lo, int *hi)
{
    *lo = h;
    *hi = -1;
    for (int y = y0; y < y1; y++)
        for (int dy = -1; dy <= 1; dy++) {
            int m = ref_border_index(y + dy, h, border);
            if (m < 0)
                continue;
            for (int k = -r; k <= r; k++) {
                int g = ref_border_index(m + k, h, border);
                if (g < 0)
                    continue;
                if (g < *lo) *lo = g;
                if (g > *hi) *hi = g;
            }
        }
}

int main(void)
{
    long cases = 0, bad = 0, toolong = 0, outside = 0;
    char what[160] = "";

    for (int border = 0; border <= 2; border++)
        for (int h = 1; h <= 40; h++)
            for (int r = 0; r <= 6; r++)
                for (int y0 = 0; y0 < h; y0++)
                    for (int y1 = y0 + 1; y1 <= h; y1++) {
                        int lo, hi, nlo, nhi;
                        strip_window(y0, y1, h, r, border, &lo, &hi);
                        need(y0, y1, h, r, border, &nlo, &nhi);
                        cases++;
                        if (lo < 0 || hi >= h || lo > hi)
                            outside++;
                        if (nhi >= 0 && (nlo < lo || nhi > hi)) {
                            if (!bad++)
                                snprintf(what, sizeof what,
                                         "border %d h %d r %d rows [%d,%d): window [%d,%d] "
                                         "misses [%d,%d]", border, h, r, y0, y1, lo, hi,
                                         nlo, nhi);
                        }
                        if (hi - lo + 1 > (y1 - y0) + 2 * r + 2)
                            toolong++;
                    }
    CHECK(bad == 0, "strip_window holds every row the taps reach (3 borders, h 1..40, r 0..6, "
          "every strip)", "%ld of %ld cases, first: %s", bad, cases, what);
    CHECK(outside == 0, "strip_window stays inside the image", "%ld cases", outside);
    CHECK(toolong == 0, "strip_window is at most rows + 2r + 2 rows (what strip_rows budgets)",
          "%ld cases", toolong);

    /* strip_rows: the largest row count whose buffers fit */
    {
        int fails = 0;
        for (size_t budget = 1000; budget < 2000000; budget = budget * 3 / 2 + 7)
            for (int r = 0; r <= 32; r += 4) {
                const int h = 5000;
                const size_t in_row = 3 * 1001 + 4, out_row = 1001;
                int s = strip_rows(h, r, in_row, out_row, 2, budget);
                size_t one = strip_bytes(1, r, in_row, out_row, 2);
                if (s == 0 ? one <= budget
                           : (s < 1 || s > h ||
                              strip_bytes(s, r, in_row, out_row, 2) > budget ||
                              (s < h && strip_bytes(s + 1, r, in_row, out_row, 2) <= budget)))
                    fails++;
            }
        CHECK(fails == 0, "strip_rows: largest strip within the budget, 0 when one row does not fit",
              "%d cases wrong", fails);
        CHECK(strip_rows(100, 2, 10, 10, 2, (size_t)-1) == 100,
              "strip_rows: an ample budget gives the whole height", "%s", "");
        CHECK(strip_bytes(1, 2, SIZE_MAX / 2, 1, 2) == SIZE_MAX &&
              strip_rows(100, 2, SIZE_MAX / 2, 1, 2, (size_t)-1 - 1) == 0,
              "strip_bytes/strip_rows: overflow is 'does not fit'", "%s", "");
        CHECK(strip_bytes(3, 1, 100, 10, 2) == 2 * ((3 + 2 + 2) * 100 + 3 * 10),
              "strip_bytes: 2 x (window (rows + 2r + 2) x in_row + rows x out_row)", "%zu",
              strip_bytes(3, 1, 100, 10, 2));
    }
    CHECK_EXIT();
}
