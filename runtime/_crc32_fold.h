/* CRC-32 (IEEE, bit-reflected polynomial 0xEDB88320) of long inputs, folded sixteen bytes at a
 * time by carry-less multiplication (PCLMULQDQ) where the CPU has it, about five times as fast as
 * a slice-by-8 table. Folding keeps a 128-bit value congruent, modulo the polynomial, to the bytes
 * read so far, so that the CRC register after them is the table CRC of those 16 bytes from a zero
 * register: the caller finishes with its table (those 16 bytes, then the tail). The constants
 * are x^(128+32), x^(128-32), x^(512+32) and x^(512-32) modulo the polynomial, bit-reflected and
 * shifted one place, as carry-less products of reflected operands need. */
#ifndef KC_CRC32_FOLD_H
#define KC_CRC32_FOLD_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* whether kc_crc32_fold may run: checked once, at the module's import */
static int kc_crc32_fold_usable(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i kc_fold16(__m128i x, __m128i k, __m128i next) {
    /* x times x^128, modulo the polynomial, plus the next sixteen bytes */
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
                         next);
}

/* Folds the first n - n % 16 bytes of b (n >= 64), the register `state` xored into the first
 * four, into `out`; returns how many bytes it folded. */
__attribute__((target("pclmul,sse4.1")))
static size_t kc_crc32_fold(uint32_t state, const uint8_t* b, size_t n, uint8_t out[16]) {
    const __m128i by64 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i by16 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i*)b), _mm_cvtsi32_si128((int)state));
    __m128i x1 = _mm_loadu_si128((const __m128i*)(b + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i*)(b + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i*)(b + 48));
    size_t at = 64;
    for (; n - at >= 64; at += 64) { /* four lanes, each 64 bytes on */
        x0 = kc_fold16(x0, by64, _mm_loadu_si128((const __m128i*)(b + at)));
        x1 = kc_fold16(x1, by64, _mm_loadu_si128((const __m128i*)(b + at + 16)));
        x2 = kc_fold16(x2, by64, _mm_loadu_si128((const __m128i*)(b + at + 32)));
        x3 = kc_fold16(x3, by64, _mm_loadu_si128((const __m128i*)(b + at + 48)));
    }
    x0 = kc_fold16(x0, by16, x1); /* the lanes into one */
    x0 = kc_fold16(x0, by16, x2);
    x0 = kc_fold16(x0, by16, x3);
    for (; n - at >= 16; at += 16)
        x0 = kc_fold16(x0, by16, _mm_loadu_si128((const __m128i*)(b + at)));
    _mm_storeu_si128((__m128i*)out, x0);
    return at;
}

#else

static int kc_crc32_fold_usable(void) { return 0; }

static size_t kc_crc32_fold(uint32_t state, const uint8_t* b, size_t n, uint8_t out[16]) {
    (void)state; (void)b; (void)n; (void)out;
    return 0;
}

#endif
#endif
