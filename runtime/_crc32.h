/* CRC-32 (IEEE, reflected 0xEDB88320; zlib.crc32's) of bytes in memory, for compiled code that
 * has no Python object for them: the bulk of a long input folded with carry-less multiplies
 * where the CPU has them (_crc32_fold.h), the rest by tables, eight bytes a step. Included by
 * each compiled module that needs it; the tables are made on first use. */
#ifndef KC_CRC32_H
#define KC_CRC32_H

#include <stddef.h>
#include <stdint.h>

#include "_crc32_fold.h"

static uint32_t kc_crc32_tables[8][256];
static int kc_crc32_ready = 0;  /* 0: not made, 1: tables, 2: tables and folding */

static void kc_crc32_make(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ ((c & 1) ? 0xEDB88320u : 0);
        kc_crc32_tables[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            kc_crc32_tables[k][n] = (kc_crc32_tables[k - 1][n] >> 8)
                                    ^ kc_crc32_tables[0][kc_crc32_tables[k - 1][n] & 0xFF];
    kc_crc32_ready = kc_crc32_fold_usable() ? 2 : 1;
}

/* The CRC register c after n more bytes. */
static uint32_t kc_crc32_step(uint32_t c, const uint8_t* b, size_t n) {
    const uint32_t (*t)[256] = kc_crc32_tables;
    for (; n >= 8; b += 8, n -= 8) {
        uint32_t low = c ^ (b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24));
        uint32_t high = b[4] | ((uint32_t)b[5] << 8) | ((uint32_t)b[6] << 16) | ((uint32_t)b[7] << 24);
        c = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24]
            ^ t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
    }
    for (; n > 0; b++, n--)
        c = (c >> 8) ^ t[0][(c ^ *b) & 0xFF];
    return c;
}

static uint32_t kc_crc32(const uint8_t* b, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    if (!kc_crc32_ready)
        kc_crc32_make();
    if (kc_crc32_ready == 2 && n >= 64) {
        uint8_t folded[16];
        size_t used = kc_crc32_fold(c, b, n, folded);
        c = kc_crc32_step(0, folded, 16);
        b += used;
        n -= used;
    }
    return kc_crc32_step(c, b, n) ^ 0xFFFFFFFFu;
}

#endif
