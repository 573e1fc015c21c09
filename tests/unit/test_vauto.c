/*
 * test_vauto — --hwdec=auto's rule (vsrc_auto_nvdec, src/io/vsource.c):
 * the cases measured on the H200 (BENCHMARKS.md "NVDEC in segments") get
 * the faster decoder, and the rule's edges sit where vsource.c says.
 */
#include "check.h"
#include "vsource.h"

int main(void)
{
    /* measured (16 threads): software won or tied */
    CHECK(!vsrc_auto_nvdec(5, 16, 1.10), "vauto: bbb 1080p, 530 frames, 5 sessions: software", "NVDEC");
    CHECK(!vsrc_auto_nvdec(2, 16, 2.20), "vauto: bbb 4K, 265 frames, 2 sessions: software", "NVDEC");
    CHECK(!vsrc_auto_nvdec(1, 16, 1.10), "vauto: one session, 16 threads: software", "NVDEC");
    /* measured (16 threads): NVDEC won */
    CHECK(vsrc_auto_nvdec(7, 16, 3.30), "vauto: 1080p, 1590 frames, 7 sessions: NVDEC", "software");
    CHECK(vsrc_auto_nvdec(7, 16, 4.40), "vauto: 4K, 530 frames, 7 sessions: NVDEC", "software");
    /* edges */
    CHECK(vsrc_auto_nvdec(3, 16, 1.5), "vauto: 3 sessions and 1.5 Gpx: NVDEC", "software");
    CHECK(!vsrc_auto_nvdec(3, 16, 1.49), "vauto: just under 1.5 Gpx: software", "NVDEC");
    CHECK(!vsrc_auto_nvdec(2, 16, 100), "vauto: 2 sessions, however long: software", "NVDEC");
    CHECK(vsrc_auto_nvdec(1, 8, 0.01), "vauto: 8 threads: NVDEC even for one session", "software");
    CHECK(vsrc_auto_nvdec(1, 1, 0), "vauto: one thread: NVDEC", "software");
    CHECK(!vsrc_auto_nvdec(1, 9, 0.01), "vauto: 9 threads, one session: software", "NVDEC");
    CHECK_EXIT();
}
