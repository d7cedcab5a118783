/*
 * contam_guard._native: the loops that touch every character, compiled ahead of time.
 *
 * Two kinds of function live here.
 *
 * 1. The feature passes (count_tokens, markup_pass, words_pass, alnum_pass, windows_pass), the keyed hash of a
 *    keyed manifest (siphash24) and the hash table (table_build, table_first, table_fill,
 *    bits_build). They compute exactly what contam_guard.core.spec.hashing defines; the tests compare
 *    them with the spec's reference words and windows on random Unicode.
 *
 * 2. filter_jsonl: the scan's prefilter. It reads a block of JSON Lines (validating each line as
 *    strict JSON and decoding the text field) or of plain-text paragraphs, hashes each record's
 *    words, 5-grams and (optionally) 50-character windows -- its value strings as one document,
 *    each key on its own -- and looks each up in the manifest's tables,
 *    listing every hit. A line it proves clean (valid, every code point classified, no hash in
 *    the manifest) cannot produce a pair in the exact engine, so the scan only counts it; a line
 *    with hits is matched from the hits it listed. Everything else -- anything unusual, anything
 *    it is not sure of -- is handed back to the exact Python path, which reads, reports errors
 *    and matches as before. The filter may only err towards handing a line back.
 *
 * 3. line_ends and count_lines: where each line of a block ends (scrub's later passes), and
 *    how many lines and blank lines a block has (the parallel planner); glued_candidates: where
 *    a block may hold glued words (core/spec/glued.py, the scan's second reading).
 *
 * Buffers come in through the buffer protocol (numpy arrays, bytes). Every function checks what
 * it is given before it touches memory -- item sizes and integer formats, lengths, capacities,
 * offsets (non-decreasing, within the data), code points (within the tables), hash table
 * chains (strictly increasing) -- and raises TypeError or ValueError otherwise; probing a hash
 * table looks at each slot at most once, so a full or corrupt table ends the probe. The tests
 * call every kernel with malformed arguments (tests/text/test_kernel_bounds.py), and
 * `make sanitize` runs the tests with AddressSanitizer and UndefinedBehaviorSanitizer.
 * The GIL is released around every loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t u64;
typedef int64_t i64;
typedef uint32_t u32;
typedef uint8_t u8;

/* Must equal contam_guard.core.spec.hashing and contam_guard.core.spec.normalise: every one is exported
 * below and checked at import (contam_guard/core/spec/native.py). */
#define CHAR_BASE 0x9E3779B97F4A7C15ULL
#define WORD_BASE 0xC2B2AE3D27D4EB4FULL
#define LEN_MIX 0x165667B19E3779F9ULL
#define WINDOW_CHARS 50
#define GRAM_N 5
/* CLS_SOLO (spec v3): a word on its own -- the word before it closes, it starts a word that KEPT code
 * points (its combining marks) may continue, and the next ALNUM or SOLO code point starts a new one. */
/* CLS_MARKUP (spec v4): a code point markup may start with ('&', '<', '['). The text is rewritten first
 * (markup_pass, and the prefilter's rewrite of each string); after that it is punctuation, as REMOVED. */
enum {
    CLS_UNKNOWN = 0, CLS_ALNUM = 1, CLS_KEPT = 2, CLS_REMOVED = 3, CLS_SPACE = 4, CLS_SPECIAL = 5, CLS_SOLO = 6,
    CLS_MARKUP = 7
};
#define N_CODEPOINTS 0x110000
#define EMPTY (-1)

/* Line statuses written by filter_jsonl; Python reads them from this module (LINE_*). A record's
 * status is on its first line; LINE_MORE marks the later lines of a plain-text paragraph. */
enum { LINE_BLANK = 0, LINE_CLEAN = 1, LINE_HITS = 2, LINE_EXACT = 3, LINE_MORE = 4 };
/* A plain-text record ends after the line at which it reaches this many bytes, if no blank line
 * ends it before (contam_guard/io/readers/paragraphs.py, checked at import). */
#define PARAGRAPH_BYTES (16 << 10)

static inline u64 fmix64(u64 x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

/* The keyed hash of a keyed manifest (hash spec cg-poly64-v1+siphash24): SipHash-2-4
 * (Aumasson & Bernstein, 2012) under the 128-bit key (k0, k1) of the one 8-byte message that is
 * the unkeyed hash, little-endian. It is the reference algorithm specialised to that length:
 * one message block, then the final block holding only the length (8 << 56). The tests check it
 * against the reference implementation's test vectors and a pure-Python SipHash. */
#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                     \
    do {                                                                             \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                    \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                       \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                       \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                    \
    } while (0)

static inline u64 siphash24_u64(u64 k0, u64 k1, u64 m) {
    u64 v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    u64 v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    const u64 last = (u64)8 << 56;
    v3 ^= m;
    SIPROUND; SIPROUND;
    v0 ^= m;
    v3 ^= last;
    SIPROUND; SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* out[i] = SipHash-2-4 of in[i] for i < n (out may be in). One hash is a chain of ~120 dependent
 * operations (about 30 cycles), so hashes are keyed in batches, where the compiler runs several
 * lanes at once: on x86-64 the same loop is also compiled for AVX2 and AVX-512 and the widest the
 * CPU has is chosen once, at import (4x faster than one at a time with AVX-512). */
#define SIPHASH_LOOP for (Py_ssize_t i = 0; i < n; i++) out[i] = siphash24_u64(k0, k1, in[i]);
static void siphash_scalar(u64 k0, u64 k1, const u64 *in, u64 *out, Py_ssize_t n) { SIPHASH_LOOP }
#if defined(__x86_64__) && defined(__GNUC__)
#define SIPHASH_DISPATCH 1
__attribute__((target("avx2"))) static void siphash_avx2(u64 k0, u64 k1, const u64 *in, u64 *out, Py_ssize_t n) {
    SIPHASH_LOOP
}
__attribute__((target("avx512f,avx512vl"))) static void siphash_avx512(u64 k0, u64 k1, const u64 *in, u64 *out,
                                                                         Py_ssize_t n) {
    SIPHASH_LOOP
}
#endif
typedef void (*SiphashBatch)(u64, u64, const u64 *, u64 *, Py_ssize_t);
static SiphashBatch siphash_batch = siphash_scalar; /* set once in PyInit__native */

/* The loop named ``name`` if this CPU runs it (NULL otherwise). */
static SiphashBatch siphash_variant(const char *name) {
    if (strcmp(name, "scalar") == 0) return siphash_scalar;
#ifdef SIPHASH_DISPATCH
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2")) return siphash_avx2;
    if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
        return siphash_avx512;
    }
#endif
    return NULL;
}

static const char *choose_siphash(void) {
#ifdef SIPHASH_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
        siphash_batch = siphash_avx512;
        return "avx512";
    }
    if (__builtin_cpu_supports("avx2")) {
        siphash_batch = siphash_avx2;
        return "avx2";
    }
#endif
    siphash_batch = siphash_scalar;
    return "scalar";
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments: buffers with a fixed item size.                                                  */

typedef struct {
    const char *name;
    int writable;
    Py_ssize_t itemsize;
    Py_buffer view;
    int held;
} Arg;

static void release(Arg *args, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (args[i].held) {
            PyBuffer_Release(&args[i].view);
            args[i].held = 0;
        }
    }
}

/* An integer (or bool) item in native byte order: the struct format codes numpy and bytes give.
 * A float or a byte-swapped array of the right item size would be read as garbage. */
static int integer_format(const char *format) {
    if (format == NULL) return 1; /* no format requested means unsigned bytes */
    if (*format == '@' || *format == '=') format++;
#if PY_LITTLE_ENDIAN
    else if (*format == '<') format++;
#else
    else if (*format == '>' || *format == '!') format++;
#endif
    return format[0] != '\0' && format[1] == '\0' && strchr("bBhHiIlLqQnN?", format[0]) != NULL;
}

/* Take buffers for args[0..n) from the first n positional arguments: C-contiguous, writable
 * where written, integer items of the expected size, a whole number of them. */
static int take(const char *func, PyObject *const *objs, Py_ssize_t nargs, Arg *args, Py_ssize_t n) {
    if (nargs < n) {
        PyErr_Format(PyExc_TypeError, "%s: expected %zd buffer arguments", func, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (args[i].writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[i], &args[i].view, flags) < 0) {
            release(args, n);
            return -1;
        }
        args[i].held = 1;
        if (args[i].view.itemsize != args[i].itemsize || args[i].view.len % args[i].itemsize ||
            !integer_format(args[i].view.format)) {
            PyErr_Format(PyExc_TypeError, "%s: %s must have integer items of %zd bytes", func,
                         args[i].name, args[i].itemsize);
            release(args, n);
            return -1;
        }
    }
    return 0;
}

#define COUNT(a) ((a).view.len / (a).itemsize)
#define PTR(a, type) ((type *)(a).view.buf)

static int too_short(const char *func, const Arg *a, Py_ssize_t need) {
    if (COUNT(*a) < need) {
        PyErr_Format(PyExc_ValueError, "%s: %s holds %zd items, needs %zd", func, a->name, COUNT(*a),
                     need);
        return 1;
    }
    return 0;
}

/* Code point tables must cover every code point. */
static int check_tables(const char *func, Arg *tables, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (too_short(func, &tables[i], N_CODEPOINTS)) return -1;
    }
    return 0;
}

/* offsets[0..n) must run from 0 to ``size``, never decreasing: each record lies inside the data
 * and after the one before it. */
static int check_offsets(const char *func, const char *name, const i64 *offsets, Py_ssize_t n, i64 size) {
    int bad = n < 1 || offsets[0] != 0 || offsets[n - 1] != size;
    for (Py_ssize_t i = 0; !bad && i + 1 < n; i++) bad = offsets[i] > offsets[i + 1];
    if (bad) {
        PyErr_Format(PyExc_ValueError, "%s: %s must run from 0 to %lld without decreasing", func, name,
                     (long long)size);
        return -1;
    }
    return 0;
}

/* Every code point must be a valid index into the tables. */
static int check_codepoints(const char *func, const u32 *cps, Py_ssize_t size) {
    for (Py_ssize_t i = 0; i < size; i++) {
        if (cps[i] >= N_CODEPOINTS) {
            PyErr_Format(PyExc_ValueError, "%s: code point %u out of range", func, cps[i]);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Feature passes over a batch of records joined with a separator (see core/spec/features.py). */

static PyObject *count_tokens(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"codepoints", 0, 4}, {"classes", 0, 1}};
    if (take("count_tokens", objs, nargs, a, 2) < 0) return NULL;
    if (check_tables("count_tokens", &a[1], 1) < 0 ||
        check_codepoints("count_tokens", PTR(a[0], u32), COUNT(a[0])) < 0) {
        release(a, 2);
        return NULL;
    }
    const u32 *cps = PTR(a[0], u32);
    const u8 *cls = PTR(a[1], u8);
    Py_ssize_t size = COUNT(a[0]), count = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Every start of a run of non-space code points, and (spec v3) every other place a word may
     * start: a SOLO code point, and an ALNUM one after a SOLO one (words_pass's ``solo``). */
    int in_token = 0, solo = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        u8 kind = cls[cps[i]];
        if (kind == CLS_SPACE) {
            in_token = solo = 0;
            continue;
        }
        if (!in_token || kind == CLS_SOLO || (solo && kind == CLS_ALNUM)) count++;
        in_token = 1;
        if (kind == CLS_SOLO || kind == CLS_ALNUM) solo = kind == CLS_SOLO;
    }
    Py_END_ALLOW_THREADS
    release(a, 2);
    return PyLong_FromSsize_t(count);
}

static PyObject *words_pass(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"codepoints", 0, 4},  {"classes", 0, 1},    {"lower", 0, 4},
               {"record_start", 0, 8}, {"word_record", 1, 8}, {"word_start", 1, 8},
               {"word_end", 1, 8},     {"word_hash", 1, 8},   {"flagged", 1, 1}};
    const Py_ssize_t n = 9;
    if (take("words_pass", objs, nargs, a, n) < 0) return NULL;
    const u32 *cps = PTR(a[0], u32);
    const u8 *cls = PTR(a[1], u8);
    const u32 *lower = PTR(a[2], u32);
    const i64 *record_start = PTR(a[3], i64);
    i64 *word_record = PTR(a[4], i64), *word_start = PTR(a[5], i64), *word_end = PTR(a[6], i64);
    u64 *word_hash = PTR(a[7], u64);
    u8 *flagged = PTR(a[8], u8);
    Py_ssize_t size = COUNT(a[0]), records = COUNT(a[3]) - 1, capacity = COUNT(a[4]);
    if (check_tables("words_pass", &a[1], 2) < 0 || check_codepoints("words_pass", cps, size) < 0 ||
        check_offsets("words_pass", "record_start", record_start, records + 1, size) < 0 ||
        too_short("words_pass", &a[8], records) || too_short("words_pass", &a[5], capacity) ||
        too_short("words_pass", &a[6], capacity) || too_short("words_pass", &a[7], capacity)) {
        release(a, n);
        return NULL;
    }
    /* A word ends at a space: each record must end with one, so that no word spans two. */
    for (Py_ssize_t r = 0; r < records; r++) {
        if (record_start[r + 1] > record_start[r] && cls[cps[record_start[r + 1] - 1]] != CLS_SPACE) {
            PyErr_Format(PyExc_ValueError, "words_pass: record %zd does not end with a space", r);
            release(a, n);
            return NULL;
        }
    }
    Py_ssize_t count = 0;
    int overflow = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t record = 0;
    i64 next_start = records > 0 ? record_start[1] : size;
    u64 acc = 0, power = 1;
    i64 length = 0, first = -1, last = -1;
    int solo = 0; /* the open word began with a SOLO code point: the next ALNUM one starts another */
    Py_ssize_t position = 0;
    while (position < size) {
        while (position >= next_start && record < records) {
            record++;
            next_start = record_start[record + 1];
        }
        u32 ch = cps[position];
        u8 kind = cls[ch];
        /* A space closes the word; so do a SOLO code point and an ALNUM one after a SOLO word. */
        int closes = kind == CLS_SPACE || kind == CLS_SOLO || (solo && kind == CLS_ALNUM);
        if (closes) {
            if (length > 0) {
                if (count >= capacity) { overflow = 1; break; }
                word_record[count] = record;
                word_start[count] = first - record_start[record];
                word_end[count] = last + 1 - record_start[record];
                word_hash[count] = fmix64(acc ^ ((u64)length * LEN_MIX));
                count++;
            }
            acc = 0; power = 1; length = 0; first = -1;
            solo = kind == CLS_SOLO;
        }
        if (kind == CLS_SPECIAL) {
            /* Drop this record's words so far and go on at the next record. */
            flagged[record] = 1;
            while (count > 0 && word_record[count - 1] == record) count--;
            acc = 0; power = 1; length = 0; first = -1; solo = 0;
            position = next_start; /* > position: the loop above keeps position < next_start */
            continue;
        }
        if (kind != CLS_SPACE && kind != CLS_REMOVED && kind != CLS_MARKUP) {
            acc += (u64)lower[ch] * power;
            power *= CHAR_BASE;
            length++;
            if (first < 0) first = position;
            last = position;
        }
        position++;
    }
    Py_END_ALLOW_THREADS
    release(a, n);
    if (overflow) {
        PyErr_SetString(PyExc_ValueError, "words_pass: more words than the output arrays hold");
        return NULL;
    }
    return PyLong_FromSsize_t(count);
}

static PyObject *alnum_pass(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"codepoints", 0, 4}, {"is_alnum", 0, 1}, {"record_start", 0, 8}, {"alnum", 1, 4},
               {"record_chars", 1, 8}};
    const Py_ssize_t n = 5;
    if (take("alnum_pass", objs, nargs, a, n) < 0) return NULL;
    const u32 *cps = PTR(a[0], u32);
    const u8 *is_alnum = PTR(a[1], u8);
    const i64 *record_start = PTR(a[2], i64);
    u32 *alnum = PTR(a[3], u32);
    i64 *record_chars = PTR(a[4], i64);
    Py_ssize_t size = COUNT(a[0]), bounds = COUNT(a[2]);
    if (check_tables("alnum_pass", &a[1], 1) < 0 || check_codepoints("alnum_pass", cps, size) < 0 ||
        check_offsets("alnum_pass", "record_start", record_start, bounds, size) < 0 ||
        too_short("alnum_pass", &a[3], size) || too_short("alnum_pass", &a[4], bounds)) {
        release(a, n);
        return NULL;
    }
    Py_ssize_t written = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t record = 0; record < bounds - 1; record++) {
        record_chars[record] = written;
        for (i64 p = record_start[record]; p < record_start[record + 1]; p++) {
            u32 ch = cps[p];
            if (is_alnum[ch]) alnum[written++] = ch;
        }
    }
    record_chars[bounds - 1] = written;
    Py_END_ALLOW_THREADS
    release(a, n);
    return PyLong_FromSsize_t(written);
}

/* ------------------------------------------------------------------------------------------ */
/* Spec v4's step m: HTML and Markdown markup read as its reader sees it, rewritten in place with
 * the text's length kept. The rules are contam_guard/core/spec/markup.py's (its docstring says them);
 * the tests compare the two on random and hostile text. Each search stops at the next character
 * its rule cannot contain, and the search for "-->" is remembered, so a text is rewritten in time
 * linear in its length; every read is below ``end``. */

#include "html_entities.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MARKUP_SPACE 0x20u
#define MARKUP_FILL 0x2060u /* WORD JOINER: fills the rest of a character reference (spec v4 removes it) */

static inline int ascii_alpha(u32 c) { return (c | 0x20u) >= 'a' && (c | 0x20u) <= 'z'; }
static inline int ascii_digit(u32 c) { return c >= '0' && c <= '9'; }
static inline int ascii_alnum(u32 c) { return ascii_alpha(c) || ascii_digit(c); }
static inline int hex_digit(u32 c) { return ascii_digit(c) || ((c | 0x20u) >= 'a' && (c | 0x20u) <= 'f'); }
static inline int scheme_char(u32 c) { return ascii_alnum(c) || c == '+' || c == '.' || c == '-'; }
static inline int email_char(u32 c) {
    switch (c) {
        case '.': case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '/':
        case '=': case '?': case '^': case '_': case '`': case '{': case '|': case '}': case '~': case '-':
            return 1;
        default:
            return ascii_alnum(c);
    }
}
static inline int domain_char(u32 c) { return ascii_alnum(c) || c == '.' || c == '-'; }

/* Write v at t[k], counting the code points that change. */
static inline void put(u32 *t, Py_ssize_t k, u32 v, Py_ssize_t *changed) {
    *changed += t[k] != v;
    t[k] = v;
}

/* What a numeric character reference decodes to (``value`` saturated above U+10FFFF), as
 * html.unescape does: a code point, or HTML_DROPPED for none. */
static u32 decode_number(u32 value) {
    if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0xFFFD;
    size_t lo = 0, hi = HTML_NUMBER_COUNT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (HTML_NUMBERS[mid].number < value) lo = mid + 1;
        else hi = mid;
    }
    return lo < HTML_NUMBER_COUNT && HTML_NUMBERS[lo].number == value ? HTML_NUMBERS[lo].decoded : value;
}

/* Rule 1, at t[i] == '&': the reference's length (0: none); what it decodes to in out[0..*n). */
static Py_ssize_t reference(const u32 *t, Py_ssize_t i, Py_ssize_t end, u32 out[2], int *n) {
    Py_ssize_t j = i + 1;
    if (j < end && t[j] == '#') {
        int hex = j + 1 < end && (t[j + 1] == 'x' || t[j + 1] == 'X');
        j += 1 + hex;
        Py_ssize_t first = j;
        u32 value = 0;
        for (; j < end && (hex ? hex_digit(t[j]) : ascii_digit(t[j])); j++) {
            u32 digit = ascii_digit(t[j]) ? t[j] - '0' : (t[j] | 0x20u) - 'a' + 10;
            value = value > 0x10FFFF ? 0x110000 : value * (hex ? 16 : 10) + digit;
        }
        if (j == first || j >= end || t[j] != ';') return 0;
        out[0] = decode_number(value);
        *n = out[0] != HTML_DROPPED;
        return j + 1 - i;
    }
    char name[HTML_NAME_MAX + 1];
    int length = 0;
    if (j >= end || !ascii_alpha(t[j])) return 0;
    for (; j < end && ascii_alnum(t[j]); j++) {
        if (length == HTML_NAME_MAX) return 0;
        name[length++] = (char)t[j];
    }
    if (j >= end || t[j] != ';') return 0;
    name[length] = '\0';
    size_t lo = 0, hi = HTML_NAMED_COUNT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int order = strcmp(HTML_NAMED[mid].name, name);
        if (order == 0) {
            out[0] = HTML_NAMED[mid].first;
            out[1] = HTML_NAMED[mid].second;
            *n = out[1] ? 2 : 1;
            return j + 1 - i;
        }
        if (order < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The first "-->" at or after ``from`` ending by ``end`` (-1: none), remembered: searches go left
 * to right, so one answer serves every later search that starts at or before it. */
typedef struct {
    Py_ssize_t start, found; /* start < 0: no search yet */
} CommentEnds;

static Py_ssize_t comment_end(CommentEnds *m, const u32 *t, Py_ssize_t from, Py_ssize_t end) {
    if (m->start < 0 || (m->found >= 0 && m->found < from)) {
        m->start = from;
        m->found = -1;
        for (Py_ssize_t k = from; k + 2 < end; k++) {
            if (t[k] == '-' && t[k + 1] == '-' && t[k + 2] == '>') {
                m->found = k;
                break;
            }
        }
    }
    return m->found;
}

/* Rule 3, at t[i] == '<': the autolink's length (0: none). */
static Py_ssize_t autolink(const u32 *t, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t k = i + 1;
    if (k < end && ascii_alpha(t[k])) {
        for (k++; k < end && scheme_char(t[k]); k++) {}
        if (k - (i + 1) >= 2 && k - (i + 1) <= 32 && k < end && t[k] == ':') {
            for (k++; k < end && t[k] > 0x20 && t[k] != 0x7F && t[k] != '<' && t[k] != '>'; k++) {}
            if (k < end && t[k] == '>') return k + 1 - i;
        }
    }
    for (k = i + 1; k < end && email_char(t[k]); k++) {}
    if (k == i + 1 || k >= end || t[k] != '@') return 0;
    Py_ssize_t domain = ++k;
    for (; k < end && domain_char(t[k]); k++) {}
    return k > domain && k < end && t[k] == '>' ? k + 1 - i : 0;
}

/* Rule 4, at t[i] == '<': the tag's length (0: none). */
static Py_ssize_t tag(const u32 *t, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t k = i + 1;
    if (k < end && t[k] == '?') {
        k++;
    } else {
        if (k < end && (t[k] == '/' || t[k] == '!')) k++;
        if (k >= end || !ascii_alpha(t[k])) return 0;
        k++;
    }
    for (; k < end && t[k] != '<' && t[k] != '>'; k++) {}
    return k < end && t[k] == '>' ? k + 1 - i : 0;
}

static Py_ssize_t next_bracket(const u32 *t, Py_ssize_t k, Py_ssize_t end) {
    for (; k < end && t[k] != '[' && t[k] != ']'; k++) {}
    return k;
}

/* Rule 5, at t[i] == '[': where the link ends (0: no link), its text ending at *close (the ']'). */
static Py_ssize_t link_end(const u32 *t, Py_ssize_t i, Py_ssize_t end, Py_ssize_t *close) {
    Py_ssize_t j = next_bracket(t, i + 1, end);
    if (j >= end || t[j] != ']' || j + 1 >= end) return 0;
    *close = j;
    if (t[j + 1] == '(') {
        Py_ssize_t depth = 0;
        for (Py_ssize_t k = j + 1; k < end; k++) {
            if (t[k] == '[' || t[k] == ']') return 0;
            if (t[k] == '(') depth++;
            else if (t[k] == ')' && --depth == 0) return k + 1;
        }
        return 0;
    }
    if (t[j + 1] == '[') {
        Py_ssize_t k = next_bracket(t, j + 2, end);
        if (k < end && t[k] == ']') return k + 1;
    }
    return 0;
}

/* The first '&', '<' or '[' at or after t[i] (``end`` if none). Most text holds few: with SSE2
 * (every x86-64 CPU), eight code points are compared at a time (GCC does not vectorise a search
 * loop itself), so that the rewrite adds little to a hashing pass over text without markup. */
static inline Py_ssize_t next_trigger(const u32 *t, Py_ssize_t i, Py_ssize_t end) {
#ifdef __SSE2__
    const __m128i amp = _mm_set1_epi32('&'), less = _mm_set1_epi32('<'), bracket = _mm_set1_epi32('[');
    for (; i + 8 <= end; i += 8) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(t + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(t + i + 4));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(a, amp), _mm_cmpeq_epi32(a, less)),
                                   _mm_cmpeq_epi32(a, bracket));
        hit = _mm_or_si128(hit, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(b, amp), _mm_cmpeq_epi32(b, less)),
                                             _mm_cmpeq_epi32(b, bracket)));
        if (_mm_movemask_epi8(hit)) break;
    }
#endif
    for (; i < end && t[i] != '&' && t[i] != '<' && t[i] != '['; i++) {}
    return i;
}

/* Step m on t[start, end), in place; returns how many code points changed. A link's text is
 * rewritten by a call of its own (it holds no '[': one level deep at most). */
static Py_ssize_t rewrite_markup(u32 *t, Py_ssize_t start, Py_ssize_t end) {
    CommentEnds comments = {-1, -1};
    Py_ssize_t changed = 0;
    for (Py_ssize_t i = next_trigger(t, start, end); i < end; i = next_trigger(t, i + 1, end)) {
        u32 c = t[i];
        Py_ssize_t length = 0;
        if (c == '&') {
            u32 decoded[2] = {0, 0};
            int n = 0;
            length = reference(t, i, end, decoded, &n);
            for (Py_ssize_t k = 0; k < length; k++) put(t, i + k, k < n ? decoded[k] : MARKUP_FILL, &changed);
        } else if (c == '<') {
            if (i + 3 < end && t[i + 1] == '!' && t[i + 2] == '-' && t[i + 3] == '-') {
                Py_ssize_t close = comment_end(&comments, t, i + 2, end);
                length = close < 0 ? 0 : close + 3 - i;
            } else if ((length = autolink(t, i, end)) > 0) {
                put(t, i, MARKUP_SPACE, &changed);
                put(t, i + length - 1, MARKUP_SPACE, &changed);
                i += length - 1;
                continue;
            } else {
                length = tag(t, i, end);
            }
            for (Py_ssize_t k = 0; k < length; k++) put(t, i + k, MARKUP_SPACE, &changed);
        } else {
            Py_ssize_t close = 0, after = link_end(t, i, end, &close);
            if (after > 0) {
                put(t, i, MARKUP_SPACE, &changed);
                changed += rewrite_markup(t, i + 1, close);
                for (Py_ssize_t k = close; k < after; k++) put(t, k, MARKUP_SPACE, &changed);
                length = after - i;
            }
        }
        if (length > 0) i += length - 1;
    }
    return changed;
}

/* markup_pass(codepoints, record_start, out) -> changed: ``out`` receives ``codepoints`` with each
 * record's markup rewritten (``out`` may be ``codepoints``). */
static PyObject *markup_pass(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"codepoints", 0, 4}, {"record_start", 0, 8}, {"out", 1, 4}};
    const Py_ssize_t n = 3;
    if (take("markup_pass", objs, nargs, a, n) < 0) return NULL;
    const u32 *cps = PTR(a[0], u32);
    const i64 *record_start = PTR(a[1], i64);
    u32 *out = PTR(a[2], u32);
    Py_ssize_t size = COUNT(a[0]), bounds = COUNT(a[1]), changed = 0;
    if (check_codepoints("markup_pass", cps, size) < 0 ||
        check_offsets("markup_pass", "record_start", record_start, bounds, size) < 0 ||
        too_short("markup_pass", &a[2], size)) {
        release(a, n);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (size > 0) memmove(out, cps, sizeof(u32) * (size_t)size);
    for (Py_ssize_t record = 0; record + 1 < bounds; record++) {
        changed += rewrite_markup(out, record_start[record], record_start[record + 1]);
    }
    Py_END_ALLOW_THREADS
    release(a, n);
    return PyLong_FromSsize_t(changed);
}

/* B**49 and B**-1 mod 2**64, for rolling a window one character on. */
static u64 window_top(void) {
    u64 top = 1;
    for (int i = 0; i < WINDOW_CHARS - 1; i++) top *= CHAR_BASE;
    return top;
}

static u64 base_inverse(void) {
    u64 inverse = CHAR_BASE; /* Newton's iteration doubles the correct low bits each step */
    for (int i = 0; i < 6; i++) inverse *= 2 - CHAR_BASE * inverse;
    return inverse;
}

static PyObject *windows_pass(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"alnum", 0, 4}, {"record_chars", 0, 8}, {"window_hash", 1, 8}, {"window_valid", 1, 1}};
    const Py_ssize_t n = 4;
    if (take("windows_pass", objs, nargs, a, n) < 0) return NULL;
    const u32 *alnum = PTR(a[0], u32);
    const i64 *record_chars = PTR(a[1], i64);
    u64 *window_hash = PTR(a[2], u64);
    u8 *window_valid = PTR(a[3], u8);
    Py_ssize_t size = COUNT(a[0]), bounds = COUNT(a[1]);
    if (check_offsets("windows_pass", "record_chars", record_chars, bounds, size) < 0 ||
        too_short("windows_pass", &a[2], size) || too_short("windows_pass", &a[3], size)) {
        release(a, n);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    const u64 top = window_top(), inverse = base_inverse();
    for (Py_ssize_t record = 0; record + 1 < bounds; record++) {
        i64 start = record_chars[record], end = record_chars[record + 1];
        if (end - start < WINDOW_CHARS) continue;
        u64 acc = 0, weight = 1;
        for (int u = 0; u < WINDOW_CHARS; u++) {
            acc += (u64)alnum[start + u] * weight;
            weight *= CHAR_BASE;
        }
        for (i64 p = start;; p++) {
            window_hash[p] = fmix64(acc);
            window_valid[p] = 1;
            if (p + WINDOW_CHARS >= end) break;
            acc = (acc - (u64)alnum[p]) * inverse + (u64)alnum[p + WINDOW_CHARS] * top;
        }
    }
    Py_END_ALLOW_THREADS
    release(a, n);
    Py_RETURN_NONE;
}

/* siphash24(key, hashes, out): out[i] = SipHash-2-4 of hashes[i] under key = (k0, k1), two
 * uint64 items. ``out`` may be ``hashes`` itself. The exact path's keyed hashes (core/spec/hashing.py
 * HashKey.apply); the prefilter keys its hashes with the same function (Pending). */
static PyObject *siphash24_with(SiphashBatch batch, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"key", 0, 8}, {"hashes", 0, 8}, {"out", 1, 8}};
    if (take("siphash24", objs, nargs, a, 3) < 0) return NULL;
    Py_ssize_t count = COUNT(a[1]);
    if (COUNT(a[0]) != 2) {
        PyErr_SetString(PyExc_ValueError, "siphash24: key must hold 2 items (k0, k1)");
        release(a, 3);
        return NULL;
    }
    if (too_short("siphash24", &a[2], count)) {
        release(a, 3);
        return NULL;
    }
    const u64 k0 = PTR(a[0], u64)[0], k1 = PTR(a[0], u64)[1];
    const u64 *in = PTR(a[1], u64);
    u64 *out = PTR(a[2], u64);
    Py_BEGIN_ALLOW_THREADS
    batch(k0, k1, in, out, count);
    Py_END_ALLOW_THREADS
    release(a, 3);
    Py_RETURN_NONE;
}

static PyObject *siphash24(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    return siphash24_with(siphash_batch, objs, nargs);
}

/* For tests: siphash24 through the loop ``variant`` ("scalar", "avx2", "avx512"), so that every
 * loop this CPU can run is checked, not only the one chosen at import: True, or False (nothing
 * written) where this CPU or build has no such loop. */
static PyObject *siphash24_variant(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    if (nargs != 4 || !PyUnicode_Check(objs[0])) {
        PyErr_SetString(PyExc_TypeError, "siphash24_variant: expected (variant, key, hashes, out)");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(objs[0]);
    if (name == NULL) return NULL;
    SiphashBatch wanted = siphash_variant(name);
    if (wanted == NULL) Py_RETURN_FALSE;
    PyObject *done = siphash24_with(wanted, objs + 1, 3);
    if (done == NULL) return NULL;
    Py_DECREF(done);
    Py_RETURN_TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Hash table: open addressing over the manifest's hashes; postings sharing a hash are chained.
 * A slot is one uint64: the hash's top 32 bits (its tag) over the first posting's 32 (all ones:
 * an empty slot). A probe compares tags within the slots' own cache lines and reads the hash
 * array only where a tag matches (nearly always a hit, whose chain is read next anyway): half
 * the memory of (hash, posting) pairs, which against 100,000 items was 512 MiB of windows. */

#define SLOT_POSTING 0xFFFFFFFFull /* the posting's bits of a slot; all ones: empty (so a table
                                     holds fewer postings than this) */

static int check_slots(const char *func, const Arg *slots) {
    Py_ssize_t size = COUNT(*slots);
    if (size < 1 || (size & (size - 1))) {
        PyErr_Format(PyExc_ValueError, "%s: slots must be a power of two of them", func);
        return -1;
    }
    return 0;
}

static PyObject *table_build(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"hashes", 0, 8}, {"slots", 1, 8}, {"chain", 1, 8}};
    if (take("table_build", objs, nargs, a, 3) < 0) return NULL;
    const u64 *hashes = PTR(a[0], u64);
    u64 *slots = PTR(a[1], u64);
    i64 *chain = PTR(a[2], i64);
    Py_ssize_t count = COUNT(a[0]), size = COUNT(a[1]);
    if (check_slots("table_build", &a[1]) < 0 || too_short("table_build", &a[2], count) || count >= size ||
        (u64)count >= SLOT_POSTING) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "table_build: the table is too small");
        release(a, 3);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    u64 mask = (u64)size - 1;
    for (Py_ssize_t s = 0; s < size; s++) slots[s] = SLOT_POSTING;
    for (Py_ssize_t posting = count - 1; posting >= 0; posting--) { /* backwards: chains run forwards */
        u64 value = hashes[posting], slot = value & mask, tag = value & ~SLOT_POSTING, there;
        /* the hash's slot (its tag compared first: the hash array is read only on a match) */
        while ((there = slots[slot] & SLOT_POSTING) != SLOT_POSTING &&
               ((slots[slot] & ~SLOT_POSTING) != tag || hashes[there] != value)) {
            slot = (slot + 1) & mask;
        }
        chain[posting] = there == SLOT_POSTING ? EMPTY : (i64)there;
        slots[slot] = tag | (u64)posting;
    }
    Py_END_ALLOW_THREADS
    release(a, 3);
    Py_RETURN_NONE;
}

/* The first posting whose hash is ``value``, or EMPTY. A posting outside [0, count) ends the
 * probe (an empty slot's all-ones posting does), and so does having looked at every slot once (a
 * table with no empty slot), so a corrupt table can give a wrong answer but never an index
 * outside the postings, nor a probe without end. */
static inline i64 first_posting(u64 count, const u64 *hashes, const u64 *slots, u64 mask, u64 value) {
    u64 slot = value & mask, tag = value & ~SLOT_POSTING;
    for (u64 probes = 0; probes <= mask; probes++) {
        u64 entry = slots[slot], posting = entry & SLOT_POSTING;
        if (posting >= count) return EMPTY;
        if ((entry & ~SLOT_POSTING) == tag && hashes[posting] == value) return (i64)posting;
        slot = (slot + 1) & mask;
    }
    return EMPTY;
}

/* The posting after ``posting`` in its chain: EMPTY at the end, or a larger posting below
 * ``count`` (chains run forwards, so a walk ends); -2 for anything else (a corrupt chain). */
static inline i64 next_posting(const i64 *chain, i64 posting, i64 count) {
    i64 next = chain[posting];
    return next == EMPTY || (next > posting && next < count) ? next : -2;
}

static PyObject *corrupt_chain(const char *func) {
    PyErr_Format(PyExc_ValueError, "%s: chain must hold -1 or a larger posting for each posting", func);
    return NULL;
}

/* first[q] = the first posting equal to queries[q] (EMPTY if none or not valid); returns the
 * number of (query, posting) pairs. */
static PyObject *table_first(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"hashes", 0, 8}, {"slots", 0, 8}, {"chain", 0, 8},
               {"queries", 0, 8}, {"valid", 0, 1}, {"first", 1, 8}};
    const Py_ssize_t n = 6;
    if (take("table_first", objs, nargs, a, n) < 0) return NULL;
    Py_ssize_t queries_n = COUNT(a[3]);
    if (check_slots("table_first", &a[1]) < 0 || too_short("table_first", &a[2], COUNT(a[0])) ||
        too_short("table_first", &a[4], queries_n) || too_short("table_first", &a[5], queries_n)) {
        release(a, n);
        return NULL;
    }
    const u64 *queries = PTR(a[3], u64), *hashes = PTR(a[0], u64), *slots = PTR(a[1], u64);
    const i64 *chain = PTR(a[2], i64);
    const u8 *valid = PTR(a[4], u8);
    i64 *first = PTR(a[5], i64);
    Py_ssize_t total = 0;
    int corrupt = 0;
    Py_BEGIN_ALLOW_THREADS
    u64 mask = (u64)COUNT(a[1]) - 1, count = (u64)COUNT(a[0]);
    for (Py_ssize_t q = 0; q < queries_n && !corrupt; q++) {
        i64 posting = valid[q] ? first_posting(count, hashes, slots, mask, queries[q]) : EMPTY;
        first[q] = posting;
        for (; posting >= 0; posting = next_posting(chain, posting, (i64)count)) total++;
        corrupt = posting != EMPTY;
    }
    Py_END_ALLOW_THREADS
    release(a, n);
    if (corrupt) return corrupt_chain("table_first");
    return PyLong_FromSsize_t(total);
}

static PyObject *table_fill(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"chain", 0, 8}, {"first", 0, 8}, {"where", 1, 8}, {"found", 1, 8}};
    const Py_ssize_t n = 4;
    if (take("table_fill", objs, nargs, a, n) < 0) return NULL;
    const i64 *chain = PTR(a[0], i64), *first = PTR(a[1], i64);
    i64 *where = PTR(a[2], i64), *found = PTR(a[3], i64);
    Py_ssize_t queries_n = COUNT(a[1]), capacity = COUNT(a[2]), k = 0, chain_n = COUNT(a[0]);
    if (too_short("table_fill", &a[3], capacity)) {
        release(a, n);
        return NULL;
    }
    int overflow = 0, corrupt = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < queries_n && !overflow && !corrupt; q++) {
        i64 posting = first[q];
        if (posting != EMPTY && (posting < 0 || posting >= chain_n)) { corrupt = 2; break; }
        for (; posting >= 0; posting = next_posting(chain, posting, chain_n)) {
            if (k >= capacity) { overflow = 1; break; }
            where[k] = q;
            found[k] = posting;
            k++;
        }
        if (!overflow && posting != EMPTY) corrupt = 1;
    }
    Py_END_ALLOW_THREADS
    release(a, n);
    if (corrupt == 2) {
        PyErr_SetString(PyExc_ValueError, "table_fill: first must hold -1 or a posting of the chain");
        return NULL;
    }
    if (corrupt) return corrupt_chain("table_fill");
    if (overflow) {
        PyErr_SetString(PyExc_ValueError, "table_fill: more pairs than the output arrays hold");
        return NULL;
    }
    return PyLong_FromSsize_t(k);
}

/* A blocked Bloom filter over the manifest's hashes: each hash sets three bits of the 64-bit
 * word its top bits choose. Most probes of a hash that is not there end in that one word,
 * which for a set of a few hundred thousand hashes stays in cache, instead of a cache miss in
 * the table; with 16 bits per hash about 1 in 150 absent hashes gets through. */
static inline u64 bloom_mask(u64 h) {
    return (1ULL << (h & 63)) | (1ULL << ((h >> 6) & 63)) | (1ULL << ((h >> 12) & 63));
}

static inline u64 bloom_word(u64 h, int shift) {
    return shift == 64 ? 0 : h >> shift;
}

static int bloom_shift(Py_ssize_t words) {
    int shift = 64;
    for (Py_ssize_t w = words; w > 1; w >>= 1) shift--;
    return shift;
}

static PyObject *bits_build(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"hashes", 0, 8}, {"bits", 1, 8}};
    if (take("bits_build", objs, nargs, a, 2) < 0) return NULL;
    Py_ssize_t words = COUNT(a[1]);
    if (words < 1 || (words & (words - 1))) {
        PyErr_SetString(PyExc_ValueError, "bits_build: bits must be a power of two of words");
        release(a, 2);
        return NULL;
    }
    const u64 *hashes = PTR(a[0], u64);
    u64 *bits = PTR(a[1], u64);
    Py_ssize_t count = COUNT(a[0]);
    Py_BEGIN_ALLOW_THREADS
    int shift = bloom_shift(words);
    memset(bits, 0, (size_t)words * 8);
    for (Py_ssize_t i = 0; i < count; i++) bits[bloom_word(hashes[i], shift)] |= bloom_mask(hashes[i]);
    Py_END_ALLOW_THREADS
    release(a, 2);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------ */
#include "reword_pass.h"

/* The prefilter: strict JSON, the text field decoded, hashed and looked up, hits listed.     */

/* A hash set over one kind of the manifest's hashes (5-grams or windows), and the list of
 * hits found in it: (line, position in the record, posting) for every posting of every hash
 * of a record that is in the manifest. */
typedef struct {
    u64 count;
    const u64 *hashes;
    const u64 *slots;
    const i64 *chain;
    u64 mask;
    const u64 *bits;
    int shift; /* bit index = hash >> shift */
    i64 *hit_line, *hit_at, *hit_posting;
    Py_ssize_t capacity, hits;
    int overflow;
} HashSet;

static inline void find_hits(HashSet *set, u64 h, i64 line, i64 at) {
    u64 want = bloom_mask(h);
    if ((set->bits[bloom_word(h, set->shift)] & want) != want) return;
    i64 posting = first_posting(set->count, set->hashes, set->slots, set->mask, h);
    for (; posting >= 0 && (u64)posting < set->count; posting = set->chain[posting]) {
        if (set->hits >= set->capacity) {
            set->overflow = 1;
            return;
        }
        set->hit_line[set->hits] = line;
        set->hit_at[set->hits] = at;
        set->hit_posting[set->hits] = posting;
        set->hits++;
    }
}

/* A keyed manifest's lookups: a text's hashes wait here, in order, and are keyed (SipHash-2-4)
 * a batch at a time before find_hits looks them up (see siphash_batch), so that the keyed scan
 * runs nearly as fast as an unkeyed one. The hits come out in the same order as unkeyed. */
#define PENDING 512
typedef struct {
    u64 k0, k1;
    u64 hash[PENDING];
    i64 at[PENDING];
    int n;
} Pending;

static void flush_pending(Pending *p, HashSet *set, i64 line) {
    siphash_batch(p->k0, p->k1, p->hash, p->hash, p->n);
    for (int i = 0; i < p->n; i++) find_hits(set, p->hash[i], line, p->at[i]);
    p->n = 0;
}

/* Look ``h`` up in ``set`` now (unkeyed: ``p`` NULL) or, keyed, once its batch is full. */
static inline void look_up(Pending *p, HashSet *set, u64 h, i64 line, i64 at) {
    if (p == NULL) {
        find_hits(set, h, line, at);
        return;
    }
    p->hash[p->n] = h;
    p->at[p->n] = at;
    if (++p->n == PENDING) flush_pending(p, set, line);
}

/* Growable code point buffers (plain malloc: they are used without the GIL). */
typedef struct {
    u32 *data;
    Py_ssize_t capacity;
} Buffer;

static int reserve(Buffer *b, Py_ssize_t need) {
    if (need <= b->capacity) return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < need) capacity *= 2;
    u32 *data = realloc(b->data, sizeof(u32) * (size_t)capacity);
    if (data == NULL) return -1;
    b->data = data;
    b->capacity = capacity;
    return 0;
}

/* The words of the records the filter reads, for the rewording rules (filter_jsonl's ``vocab``):
 * each word's hash (unkeyed, as text.hashing.hash_words makes it), how many words each string and
 * each document holds and the line its record starts on, and the spelling (normalised code
 * points) of each word the pass's vocabulary does not hold yet: Python then stems only the new
 * words and never decodes a line again. A record that goes to the exact path takes its words
 * back (``word_marks``). */
enum {
    W_HASH, W_STRING_WORDS, W_STRING_LINE, W_DOC_WORDS, W_DOC_LINE, W_BREAK, W_ROW, W_SPELLED, W_SPELLED_END,
    W_SPELLED_HASH, WORD_OUTS
};
typedef struct {
    const RewordPass *vocab;
    Out out[WORD_OUTS]; /* u64 per word; i64 x 2 per string; i64 x 2 per document; u8 per word
                           (a newline before it in its string: the rewording pass's lines); i32 per word
                           (its vocabulary row, -1: none yet); u32 code points of the new words; per new word its end there (i64), its hash */
    u64 *spelled_key;   /* the new words spelled so far (open addressing; used[slot] marks) */
    u8 *spelled_used;
    Py_ssize_t spelled_slots, spelled_count;
    int failed;         /* out of memory */
} WordOut;

static inline void word_push(WordOut *o, int k, const void *item, Py_ssize_t size) {
    if (out_push(&o->out[k], item, size) < 0) o->failed = 1;
}

/* Whether ``h`` was spelled before in this block (and from now on it is): each new word is
 * spelled once per block, however often it occurs. */
static int spelled_before(WordOut *o, u64 h) {
    if (2 * (o->spelled_count + 1) > o->spelled_slots) { /* keep the table at most half full */
        Py_ssize_t slots = o->spelled_slots ? 2 * o->spelled_slots : 1024;
        u64 *key = calloc((size_t)slots, sizeof(u64));
        u8 *used = calloc((size_t)slots, 1);
        if (key == NULL || used == NULL) {
            free(key);
            free(used);
            o->failed = 1;
            return 1;
        }
        for (Py_ssize_t k = 0; k < o->spelled_slots; k++) {
            if (!o->spelled_used[k]) continue;
            u64 slot = o->spelled_key[k] & (u64)(slots - 1);
            while (used[slot]) slot = (slot + 1) & (u64)(slots - 1);
            key[slot] = o->spelled_key[k];
            used[slot] = 1;
        }
        free(o->spelled_key);
        free(o->spelled_used);
        o->spelled_key = key;
        o->spelled_used = used;
        o->spelled_slots = slots;
    }
    u64 mask = (u64)o->spelled_slots - 1, slot = h & mask;
    for (; o->spelled_used[slot]; slot = (slot + 1) & mask) {
        if (o->spelled_key[slot] == h) return 1;
    }
    o->spelled_key[slot] = h;
    o->spelled_used[slot] = 1;
    o->spelled_count++;
    return 0;
}

/* A word closed at text[end] (exclusive), begun at text[start]: its hash, and its spelling when
 * the vocabulary lacks it (the characters the word loop kept, lowered). */
static void word_out(WordOut *o, u64 hash, const u32 *text, Py_ssize_t start, Py_ssize_t end,
                     const u8 *cls, const u32 *lower) {
    word_push(o, W_HASH, &hash, sizeof hash);
    /* its row too, so that the rewording pass looks each word up once (-1: not there yet, or
     * past what 32 bits hold: looked up again then) */
    i64 row = vocab_row(o->vocab, hash);
    int32_t small = row >= 0 && row <= INT32_MAX ? (int32_t)row : -1;
    word_push(o, W_ROW, &small, sizeof small);
    if (row >= 0 || spelled_before(o, hash)) return;
    for (Py_ssize_t k = start; k < end; k++) {
        u8 kind = cls[text[k]];
        if ((u8)(kind - CLS_ALNUM) <= CLS_KEPT - CLS_ALNUM || kind == CLS_SOLO) {
            word_push(o, W_SPELLED, &lower[text[k]], sizeof(u32));
        }
    }
    i64 at = (i64)(o->out[W_SPELLED].used / (Py_ssize_t)sizeof(u32));
    word_push(o, W_SPELLED_END, &at, sizeof at);
    word_push(o, W_SPELLED_HASH, &hash, sizeof hash);
}

/* A record's words are taken back when it goes to the exact path; the words it spelled stay (a
 * word spelled is right wherever it was met: at worst the vocabulary holds a word unused). */
static void word_marks(const WordOut *o, Py_ssize_t *marks) {
    for (int k = 0; k < W_SPELLED; k++) marks[k] = o->out[k].used;
}

static void word_rollback(WordOut *o, const Py_ssize_t *marks) {
    for (int k = 0; k < W_SPELLED; k++) o->out[k].used = marks[k];
}

typedef struct {
    const u8 *cls;
    const u32 *lower;
    const u8 *is_alnum;
    WordOut *words;   /* NULL: no words wanted */
    HashSet *grams;
    HashSet *windows; /* NULL: windows not asked for */
    Pending *pending; /* NULL: an unkeyed manifest */
    int markup;       /* spec v4 (its tables class '&', '<' or '[' MARKUP): each string is rewritten first */
    Buffer alnum;     /* its alnum view */
    u32 *unknown;     /* code points met that are not classified yet, for the caller */
    Py_ssize_t unknown_capacity, unknown_count;
} Context;

enum { TEXT_OK = 0, TEXT_EXACT = 1 };
#define MAX_DEPTH 128         /* deeper JSON goes to the exact path (Python's own limit is ~1000) */
#define MAX_NUMBER_CHARS 256  /* so does a longer number (Python limits integer digits) */

/* The last five word hashes of a document; a word closing looks its 5-gram up. ``base`` is the
 * number of words of the record's earlier documents: positions count across a record's
 * documents, while a 5-gram never spans two of them (the ring starts empty in each). */
typedef struct {
    u64 w0, w1, w2, w3, w4;
    i64 words, base;
} WordRing;

static inline void close_word(WordRing *r, u64 acc, i64 length, HashSet *grams, Pending *pending, i64 line) {
    const u64 p1 = WORD_BASE, p2 = p1 * WORD_BASE, p3 = p2 * WORD_BASE, p4 = p3 * WORD_BASE;
    r->w0 = r->w1; r->w1 = r->w2; r->w2 = r->w3; r->w3 = r->w4;
    r->w4 = fmix64(acc ^ ((u64)length * LEN_MIX));
    r->words++;
    if (r->words >= GRAM_N) {
        u64 gram = fmix64(r->w0 + r->w1 * p1 + r->w2 * p2 + r->w3 * p3 + r->w4 * p4);
        look_up(pending, grams, gram, line, r->base + r->words - GRAM_N);
    }
}

/* One document of a record being hashed (a record's value strings in order, or one key): the
 * ring of its last words, whose positions count on from the record's earlier documents, and how
 * many code points of its alnum view ctx->alnum holds. */
typedef struct {
    WordRing ring;
    Py_ssize_t alnum;
} Doc;

/* Hash the words and 5-grams of one string of a document and append its alnum code points to the
 * document's alnum view. The string before it ended a word (the exact path joins a document's
 * strings with a newline), so the word state starts afresh; the ring goes on. TEXT_EXACT at a
 * code point the exact path must handle (SPECIAL) or one not classified yet. The state lives
 * in locals so that the compiler keeps it in registers. */
static int doc_add(Context *ctx, Doc *doc, const u32 *text, Py_ssize_t n, i64 line) {
    const u8 *cls = ctx->cls;
    const u32 *lower = ctx->lower;
    HashSet *grams = ctx->grams;
    Pending *pending = ctx->pending;
    WordOut *out = ctx->words;
    WordRing ring = doc->ring;
    const i64 words_before = ring.words;
    u64 acc = 0, power = 1;
    i64 length = 0;
    int solo = 0; /* as in words_pass */
    u8 line_break = 0; /* a newline since the last word */
    Py_ssize_t i = 0, start = 0;
#define CLOSE_WORD()                                                        \
    do {                                                                    \
        close_word(&ring, acc, length, grams, pending, line);               \
        if (out != NULL) {                                                  \
            word_push(out, W_BREAK, &line_break, 1);                        \
            word_out(out, ring.w4, text, start, i, cls, lower);             \
        }                                                                   \
        line_break = 0;                                                     \
    } while (0)
    for (; i < n; i++) {
        u32 ch = text[i];
        u8 kind = cls[ch];
        if ((u8)(kind - CLS_ALNUM) <= CLS_KEPT - CLS_ALNUM) { /* kept in the word */
            if (solo && kind == CLS_ALNUM) { /* the SOLO word before it ends here (length > 0) */
                CLOSE_WORD();
                acc = 0; power = 1; length = 0; solo = 0;
            }
            if (length == 0) start = i;
            acc += (u64)lower[ch] * power;
            power *= CHAR_BASE;
            length++;
        } else if (kind == CLS_SPACE) {
            if (length > 0) {
                CLOSE_WORD();
                acc = 0; power = 1; length = 0;
            }
            line_break |= ch == '\n';
            solo = 0;
        } else if (kind == CLS_SOLO) { /* closes the word before it and starts its own */
            if (length > 0) CLOSE_WORD();
            acc = (u64)lower[ch]; power = CHAR_BASE; length = 1; solo = 1; start = i;
        } else if (kind != CLS_REMOVED && kind != CLS_MARKUP) {
            return TEXT_EXACT; /* SPECIAL or UNKNOWN */
        }
    }
    if (length > 0) CLOSE_WORD();
#undef CLOSE_WORD
    doc->ring = ring;
    if (out != NULL) {
        i64 count = ring.words - words_before;
        word_push(out, W_STRING_WORDS, &count, sizeof count);
        word_push(out, W_STRING_LINE, &line, sizeof line);
    }
    if (ctx->windows == NULL) return TEXT_OK;
    if (reserve(&ctx->alnum, doc->alnum + n) < 0) return TEXT_EXACT;
    const u8 *is_alnum = ctx->is_alnum;
    u32 *alnum = ctx->alnum.data + doc->alnum;
    Py_ssize_t count = 0;
    for (i = 0; i < n; i++) {
        alnum[count] = text[i];
        count += is_alnum[text[i]];
    }
    doc->alnum += count;
    return TEXT_OK;
}

/* The document's 5-grams looked up (keyed: the last batch), then its 50-character windows;
 * *words and *alnum_chars move past it. */
static void doc_finish(Context *ctx, Doc *doc, i64 line, i64 *words, i64 *alnum_chars) {
    Pending *pending = ctx->pending;
    if (pending != NULL) flush_pending(pending, ctx->grams, line);
    *words += doc->ring.words;
    HashSet *windows = ctx->windows;
    Py_ssize_t count = doc->alnum;
    i64 base = *alnum_chars;
    *alnum_chars += count;
    if (windows == NULL || count < WINDOW_CHARS) return;
    const u32 *alnum = ctx->alnum.data;
    const u64 top = window_top(), inverse = base_inverse();
    u64 h = 0, weight = 1;
    for (int u = 0; u < WINDOW_CHARS; u++) {
        h += (u64)alnum[u] * weight;
        weight *= CHAR_BASE;
    }
    for (Py_ssize_t at = 0;; at++) {
        look_up(pending, windows, fmix64(h), line, base + at);
        if (at + WINDOW_CHARS >= count) break;
        h = (h - (u64)alnum[at]) * inverse + (u64)alnum[at + WINDOW_CHARS] * top;
    }
    if (pending != NULL) flush_pending(pending, windows, line);
}

typedef struct {
    const u8 *p;   /* next byte */
    const u8 *end; /* end of the line (exclusive) */
} Cursor;

static inline void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static inline int hexval(u8 b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

static int read_hex4(Cursor *c, u32 *out) {
    if (c->end - c->p < 4) return -1;
    u32 v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(c->p[i]);
        if (h < 0) return -1;
        v = (v << 4) | (u32)h;
    }
    c->p += 4;
    *out = v;
    return 0;
}

/* Decode one UTF-8 sequence starting at a byte >= 0x80; strict as Python's "utf-8" codec
 * (no overlong forms, no encoded surrogates, nothing above U+10FFFF). */
static int read_utf8(Cursor *c, u32 *out) {
    const u8 *p = c->p;
    Py_ssize_t left = c->end - p;
    u8 b0 = p[0];
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (left < 2 || (p[1] & 0xC0) != 0x80) return -1;
        *out = ((u32)(b0 & 0x1F) << 6) | (p[1] & 0x3F);
        c->p += 2;
        return 0;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
        u32 v = ((u32)(b0 & 0x0F) << 12) | ((u32)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF)) return -1;
        *out = v;
        c->p += 3;
        return 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return -1;
        u32 v = ((u32)(b0 & 0x07) << 18) | ((u32)(p[1] & 0x3F) << 12) | ((u32)(p[2] & 0x3F) << 6) |
                (p[3] & 0x3F);
        if (v < 0x10000 || v > 0x10FFFF) return -1;
        *out = v;
        c->p += 4;
        return 0;
    }
    return -1;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether some byte of ``w`` is below ``n`` (n <= 128), or zero after xor with ``b``. */
static inline u64 has_below(u64 w, u8 n) { return (w - ONES * n) & ~w & HIGHS; }
static inline u64 has_byte(u64 w, u8 b) { return has_below(w ^ (ONES * b), 1); }

/* How many bytes from ``p`` are plain string content: printable ASCII other than '"' and '\\'
 * (eight at a time while they last). */
static inline Py_ssize_t plain_run(const u8 *p, const u8 *end) {
    const u8 *q = p;
    while (end - q >= 8) {
        u64 w;
        memcpy(&w, q, 8);
        if ((w & HIGHS) | has_below(w, 0x20) | has_byte(w, '"') | has_byte(w, '\\')) break;
        q += 8;
    }
    while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\') q++;
    return q - p;
}

/* A JSON string, the cursor on its opening quote. Its code points go to ``out`` when that is not
 * NULL (it must have room for one per byte left in the line), and are compared with ``key``
 * (UTF-8) when that is not NULL (*equal says whether the whole string equals it). Returns -1
 * for anything json.loads would refuse or that is not plain (a lone surrogate escape). */
static int read_string(Cursor *c, u32 *out, Py_ssize_t *out_n, const u8 *key, Py_ssize_t key_len, int *equal) {
    const u8 *p = c->p + 1, *end = c->end;
    Py_ssize_t matched = 0, n = 0;
    int same = 1;
    while (1) {
        if (out != NULL && key == NULL) {
            Py_ssize_t run = plain_run(p, end);
            for (Py_ssize_t k = 0; k < run; k++) out[n + k] = p[k];
            n += run;
            p += run;
        }
        if (p >= end) return -1;
        u8 b = *p;
        u32 ch;
        if (b == '"') {
            p++;
            break;
        }
        if (b < 0x20) return -1; /* control characters must be escaped */
        if (b == '\\') {
            if (end - p < 2) return -1;
            u8 e = p[1];
            p += 2;
            switch (e) {
                case '"': ch = '"'; break;
                case '\\': ch = '\\'; break;
                case '/': ch = '/'; break;
                case 'b': ch = '\b'; break;
                case 'f': ch = '\f'; break;
                case 'n': ch = '\n'; break;
                case 'r': ch = '\r'; break;
                case 't': ch = '\t'; break;
                case 'u': {
                    Cursor h = {p, end};
                    if (read_hex4(&h, &ch) < 0) return -1;
                    if (ch >= 0xDC00 && ch <= 0xDFFF) return -1; /* lone low surrogate */
                    if (ch >= 0xD800 && ch <= 0xDBFF) {
                        u32 low;
                        if (end - h.p < 2 || h.p[0] != '\\' || h.p[1] != 'u') return -1;
                        h.p += 2;
                        if (read_hex4(&h, &low) < 0 || low < 0xDC00 || low > 0xDFFF) return -1;
                        ch = 0x10000 + ((ch - 0xD800) << 10) + (low - 0xDC00);
                    }
                    p = h.p;
                    break;
                }
                default: return -1;
            }
        } else if (b < 0x80) {
            ch = b;
            p++;
        } else {
            Cursor u = {p, end};
            if (read_utf8(&u, &ch) < 0) return -1;
            p = u.p;
        }
        if (out != NULL) out[n++] = ch;
        if (key != NULL && same) {
            /* compare the code point's UTF-8 form with the key's next bytes */
            u8 enc[4];
            int len;
            if (ch < 0x80) {
                enc[0] = (u8)ch; len = 1;
            } else if (ch < 0x800) {
                enc[0] = (u8)(0xC0 | (ch >> 6)); enc[1] = (u8)(0x80 | (ch & 0x3F)); len = 2;
            } else if (ch < 0x10000) {
                enc[0] = (u8)(0xE0 | (ch >> 12)); enc[1] = (u8)(0x80 | ((ch >> 6) & 0x3F));
                enc[2] = (u8)(0x80 | (ch & 0x3F)); len = 3;
            } else {
                enc[0] = (u8)(0xF0 | (ch >> 18)); enc[1] = (u8)(0x80 | ((ch >> 12) & 0x3F));
                enc[2] = (u8)(0x80 | ((ch >> 6) & 0x3F)); enc[3] = (u8)(0x80 | (ch & 0x3F)); len = 4;
            }
            if (matched + len > key_len || memcmp(key + matched, enc, (size_t)len) != 0) same = 0;
            else matched += len;
        }
    }
    c->p = p;
    if (out_n != NULL) *out_n = n;
    if (equal != NULL) *equal = same && matched == key_len;
    return 0;
}

/* A JSON number as Python's json reads it (its grammar is RFC 8259's). Very long ones go back
 * to the exact path, which knows Python's limit on integer digits. */
static int read_number(Cursor *c) {
    const u8 *start = c->p;
    if (c->p < c->end && *c->p == '-') c->p++;
    if (c->p >= c->end) return -1;
    if (*c->p == '0') {
        c->p++;
    } else if (*c->p >= '1' && *c->p <= '9') {
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    } else {
        return -1;
    }
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return -1;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return -1;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    }
    return c->p - start > MAX_NUMBER_CHARS ? -1 : 0;
}

static int read_literal(Cursor *c, const char *word, Py_ssize_t len) {
    if (c->end - c->p < len || memcmp(c->p, word, (size_t)len) != 0) return -1;
    c->p += len;
    return 0;
}

/* The strings one record gives the scan, decoded end to end into ``text``: segment s is
 * text[ends[s - 1], ends[s]), an object's key when key[s]. hash_segments reads the values as one
 * document (a shared run may cross from one into the next) and each key on its own. */
typedef struct {
    Buffer text;
    Py_ssize_t used;
    i64 *ends;
    u8 *key;
    Py_ssize_t count, capacity;
} Segments;

static int end_segment(Segments *g, int is_key) {
    if (g->count == g->capacity) {
        Py_ssize_t capacity = g->capacity ? 2 * g->capacity : 64;
        i64 *ends = realloc(g->ends, sizeof(i64) * (size_t)capacity);
        if (ends == NULL) return -1;
        g->ends = ends;
        u8 *key = realloc(g->key, (size_t)capacity);
        if (key == NULL) return -1;
        g->key = key;
        g->capacity = capacity;
    }
    g->key[g->count] = (u8)(is_key != 0);
    g->ends[g->count++] = g->used;
    return 0;
}

/* How a JSON line is read (the prefilter's ``mode``):
 *   READ_ALL:  every string, object keys too, in document order (no --field);
 *   READ_KEYS: the string values of the listed top-level keys, in the order listed (--field
 *              with plain key names);
 *   READ_TEXT: a plain-text line (no JSON).
 * Anything the exact path reads differently (a listed key missing, repeated, escaped, or not a
 * string) sends the line to the exact path. */
enum { READ_TEXT = 0, READ_KEYS = 1, READ_ALL = 2 };
#define MAX_KEYS 16          /* more --field names: the exact path */
#define MAX_OBJECT_KEYS 32   /* a longer object is not checked for repeated keys: "maybe" */

typedef struct {
    int mode;
    Segments *segs;     /* NULL: validate only */
    int repeated;       /* some object may hold a key twice */
    int key_count;
    const u8 *key[MAX_KEYS];
    Py_ssize_t key_len[MAX_KEYS];
    const u8 *found[MAX_KEYS]; /* READ_KEYS: the opening quote of each listed key's value */
} Walk;

typedef struct {
    const u8 *p;
    Py_ssize_t n;
} Span;

/* A string; decoded into the segments when ``decode`` (and there are segments), marked as an
 * object's key when ``is_key``. */
static int walk_string(Cursor *c, Walk *w, int decode, int is_key) {
    if (!decode || w->segs == NULL) return read_string(c, NULL, NULL, NULL, 0, NULL);
    Segments *g = w->segs;
    Py_ssize_t n = 0;
    if (reserve(&g->text, g->used + (c->end - c->p)) < 0) return -1;
    if (read_string(c, g->text.data + g->used, &n, NULL, 0, NULL) < 0) return -1;
    g->used += n;
    return end_segment(g, is_key);
}

static int walk_value(Cursor *c, int depth, Walk *w, int top);

/* Which listed key ``key`` (raw bytes between the quotes) is, or -1. */
static int listed_key(const Walk *w, Span key) {
    for (int k = 0; k < w->key_count; k++) {
        if (w->key_len[k] == key.n && memcmp(w->key[k], key.p, (size_t)key.n) == 0) return k;
    }
    return -1;
}

static int walk_object(Cursor *c, int depth, Walk *w, int top) {
    if (depth > MAX_DEPTH) return -1;
    Span seen[MAX_OBJECT_KEYS];
    int seen_n = 0;
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    while (1) {
        skip_ws(c);
        if (c->p >= c->end || *c->p != '"') return -1;
        Span key = {c->p + 1, 0};
        if (walk_string(c, w, w->mode == READ_ALL, 1) < 0) return -1;
        key.n = (c->p - 1) - key.p;
        int escaped = memchr(key.p, '\\', (size_t)key.n) != NULL;
        if (escaped || seen_n == MAX_OBJECT_KEYS) {
            w->repeated = 1; /* cannot tell cheaply: say maybe */
        } else {
            for (int j = 0; j < seen_n; j++) {
                if (seen[j].n == key.n && memcmp(seen[j].p, key.p, (size_t)key.n) == 0) w->repeated = 1;
            }
            seen[seen_n++] = key;
        }
        skip_ws(c);
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        if (top && w->mode == READ_KEYS) {
            if (escaped) return -1; /* it may be a listed key written with escapes */
            int k = listed_key(w, key);
            if (k >= 0) {
                skip_ws(c);
                /* repeated (json keeps both here) or not a string (read as a container): exact */
                if (w->found[k] != NULL || c->p >= c->end || *c->p != '"') return -1;
                w->found[k] = c->p;
            }
        }
        if (walk_value(c, depth + 1, w, 0) < 0) return -1;
        skip_ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p == '}') {
            c->p++;
            return 0;
        }
        return -1;
    }
}

static int walk_array(Cursor *c, int depth, Walk *w) {
    if (depth > MAX_DEPTH) return -1;
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 0;
    }
    while (1) {
        if (walk_value(c, depth + 1, w, 0) < 0) return -1;
        skip_ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p == ']') {
            c->p++;
            return 0;
        }
        return -1;
    }
}

static int walk_value(Cursor *c, int depth, Walk *w, int top) {
    skip_ws(c);
    if (c->p >= c->end) return -1;
    switch (*c->p) {
        case '"': return walk_string(c, w, w->mode == READ_ALL, 0);
        case '{': return walk_object(c, depth, w, top);
        case '[': return walk_array(c, depth, w);
        case 't': return read_literal(c, "true", 4);
        case 'f': return read_literal(c, "false", 5);
        case 'n': return read_literal(c, "null", 4);
        default: return read_number(c);
    }
}

/* Read one line as one JSON value and collect its segments (``w->mode``). 0 when the line is
 * valid JSON the filter reads as the exact path does; -1 when the exact path must read it
 * (anything else, including an allocation failure). */
static int read_record(Cursor *c, Walk *w) {
    skip_ws(c);
    if (w->mode == READ_KEYS) {
        if (c->p >= c->end || *c->p != '{') return -1;
        for (int k = 0; k < w->key_count; k++) w->found[k] = NULL;
    }
    if (walk_value(c, 1, w, 1) < 0) return -1;
    skip_ws(c);
    if (c->p != c->end) return -1;
    if (w->mode != READ_KEYS) return 0;
    for (int k = 0; k < w->key_count; k++) { /* the listed keys' strings, in the order listed */
        if (w->found[k] == NULL) return -1;
        Cursor at = {w->found[k], c->end};
        if (walk_string(&at, w, 1, 0) < 0) return -1;
    }
    return 0;
}

/* Split ``keys`` (NUL-separated UTF-8 key names) into ``w``; -1 for too many. */
static int set_keys(Walk *w, const u8 *keys, Py_ssize_t len) {
    w->key_count = 0;
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i <= len; i++) {
        if (i == len || keys[i] == 0) {
            if (w->key_count == MAX_KEYS) return -1;
            w->key[w->key_count] = keys + start;
            w->key_len[w->key_count] = i - start;
            w->key_count++;
            start = i + 1;
        }
    }
    return 0;
}

/* A plain-text record as the text reader takes it (its lines, the last one's "\n" or "\r\n"
 * stripped), strict UTF-8, as one segment. -1 for bytes that are not UTF-8 (the exact path
 * names the offset). */
static int read_text_record(const u8 *p, const u8 *end, Segments *g) {
    if (end > p && end[-1] == '\n') {
        end--;
        if (end > p && end[-1] == '\r') end--;
    }
    if (reserve(&g->text, end - p) < 0) return -1;
    u32 *out = g->text.data;
    Py_ssize_t n = 0;
    while (p < end) {
        if (*p < 0x80) {
            out[n++] = *p++;
            continue;
        }
        Cursor c = {p, end};
        u32 ch;
        if (read_utf8(&c, &ch) < 0) return -1;
        out[n++] = ch;
        p = c.p;
    }
    g->used = n;
    return end_segment(g, 0);
}

/* Hash one document of a record: its value strings in order (``only`` < 0), or the key ``only``;
 * positions go on from *words and *alnum_chars (readers/documents.py: the same order). */
static int hash_document(Context *ctx, const Segments *g, i64 line, Py_ssize_t only, i64 *words, i64 *alnum_chars) {
    Doc doc;
    memset(&doc, 0, sizeof doc);
    doc.ring.base = *words;
    for (Py_ssize_t s = 0; s < g->count; s++) {
        if (only < 0 ? g->key[s] : s != only) continue;
        Py_ssize_t start = s ? g->ends[s - 1] : 0;
        if (doc_add(ctx, &doc, g->text.data + start, g->ends[s] - start, line) != TEXT_OK) return TEXT_EXACT;
    }
    doc_finish(ctx, &doc, line, words, alnum_chars);
    if (ctx->words != NULL) {
        word_push(ctx->words, W_DOC_WORDS, &doc.ring.words, sizeof doc.ring.words);
        word_push(ctx->words, W_DOC_LINE, &line, sizeof line);
    }
    return TEXT_OK;
}

/* Hash a record: its values as one document, then each key on its own (positions continue
 * across them). On TEXT_EXACT the record's hits are the exact path's (the caller drops them),
 * and the whole record is looked through for code points never classified, so that one pass
 * over a new alphabet classifies all of it. */
static int hash_segments(Context *ctx, const Segments *g, i64 line) {
    i64 words = 0, alnum_chars = 0;
    int result = hash_document(ctx, g, line, -1, &words, &alnum_chars);
    for (Py_ssize_t s = 0; s < g->count && result == TEXT_OK; s++) {
        if (g->key[s]) result = hash_document(ctx, g, line, s, &words, &alnum_chars);
    }
    if (result == TEXT_OK) return TEXT_OK;
    if (ctx->pending != NULL) ctx->pending->n = 0; /* its hashes waiting to be keyed go too */
    for (Py_ssize_t i = 0; i < g->used; i++) {
        u32 ch = g->text.data[i];
        if (ctx->cls[ch] == CLS_UNKNOWN && ctx->unknown_count < ctx->unknown_capacity) {
            ctx->unknown[ctx->unknown_count++] = ch;
        }
    }
    return result;
}

/* Step m (spec v4) on each segment of a record, before it is hashed: markup never spans two. */
static void rewrite_segments(Segments *g) {
    Py_ssize_t start = 0;
    for (Py_ssize_t s = 0; s < g->count; s++) {
        rewrite_markup(g->text.data, start, g->ends[s]);
        start = g->ends[s];
    }
}

static int is_blank(const u8 *p, const u8 *end) {
    /* bytes.isspace(): ASCII space, \t, \n, \r, \v, \f */
    for (; p < end; p++) {
        if (!(*p == ' ' || (*p >= '\t' && *p <= '\r'))) return 0;
    }
    return 1;
}

/* Where the plain-text record whose first line is [p, stop) ends in a block ending at ``end``:
 * it takes the lines after it up to a blank one (or the block's end), and ends after the line
 * at which it reaches PARAGRAPH_BYTES (readers/paragraphs.py). *more: its lines after the first. */
static const u8 *text_record_end(const u8 *p, const u8 *stop, const u8 *end, Py_ssize_t *more) {
    *more = 0;
    while (stop < end && stop - p < PARAGRAPH_BYTES) {
        const u8 *nl = memchr(stop, '\n', (size_t)(end - stop));
        const u8 *next = nl ? nl + 1 : end;
        if (is_blank(stop, next)) break;
        stop = next;
        (*more)++;
    }
    return stop;
}

/* The filter's words as a tuple of bytes (WordOut's arrays, in order), or None when none were
 * asked for; every array is freed. NULL (an exception set) when memory ran out. */
static PyObject *word_tuple(WordOut *o, int wanted) {
    PyObject *result = NULL;
    if (wanted && o->failed) {
        PyErr_NoMemory();
    } else if (!wanted) {
        result = Py_NewRef(Py_None);
    } else if ((result = PyTuple_New(WORD_OUTS)) != NULL) {
        for (int k = 0; k < WORD_OUTS; k++) {
            PyObject *bytes = out_bytes(&o->out[k]);
            if (bytes == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, k, bytes);
        }
    }
    for (int k = 0; k < WORD_OUTS; k++) free(o->out[k].data);
    free(o->spelled_key);
    free(o->spelled_used);
    return result;
}

static int hashset_from(const char *func, Arg *args, HashSet *set) {
    /* args: hashes, slots, chain, bits, hit_line, hit_at, hit_posting */
    if (check_slots(func, &args[1]) < 0 || too_short(func, &args[2], COUNT(args[0]))) return -1;
    /* find_hits walks chains without checks of its own: they must end (one linear pass here) */
    const i64 *chain = PTR(args[2], i64);
    for (Py_ssize_t p = 0, count = COUNT(args[0]); p < count; p++) {
        if (next_posting(chain, p, count) == -2) {
            corrupt_chain(func);
            return -1;
        }
    }
    Py_ssize_t words = COUNT(args[3]), capacity = COUNT(args[4]);
    if (words < 1 || (words & (words - 1))) {
        PyErr_Format(PyExc_ValueError, "%s: bits must be a power of two of words", func);
        return -1;
    }
    if (too_short(func, &args[5], capacity) || too_short(func, &args[6], capacity)) return -1;
    set->count = (u64)COUNT(args[0]);
    set->hashes = PTR(args[0], u64);
    set->slots = PTR(args[1], u64);
    set->mask = (u64)COUNT(args[1]) - 1;
    set->chain = PTR(args[2], i64);
    set->bits = PTR(args[3], u64);
    set->shift = bloom_shift(words);
    set->hit_line = PTR(args[4], i64);
    set->hit_at = PTR(args[5], i64);
    set->hit_posting = PTR(args[6], i64);
    set->capacity = capacity;
    set->hits = 0;
    set->overflow = 0;
    return 0;
}

/*
 * filter_jsonl(block, keys, cls, lower, is_alnum,
 *              gram_hashes, gram_slots, gram_chain, gram_bits, gram_line, gram_at, gram_posting,
 *              window_hashes, window_slots, window_chain, window_bits, window_line, window_at,
 *              window_posting, line_end, status, line_chars, unknown, key, use_windows, mode,
 *              vocab)
 *   -> (lines, unknown_count, gram_hits, window_hits, overflow, words)
 *
 * ``block`` holds whole records (the last line may lack its newline), read as ``mode`` says
 * (READ_*): JSON Lines with every string read, or the listed top-level ``keys`` (NUL-separated),
 * or plain text (a paragraph, its last line's ending stripped, one record's text; the block
 * starts at a record's start and ends at one's end). For line k: line_end[k] is the offset just
 * past it, status[k] its LINE_* status (a record's on its first line, LINE_MORE on a paragraph's
 * later lines), line_chars[k] the code points of the record starting there (meaningful for
 * CLEAN and HITS). For every HITS record, each 5-gram (window) of its documents that is in the
 * manifest gives one hit per posting: (its first line, word (alnum) position of the 5-gram
 * (window) in the record, counted across its documents, posting). Code points not yet
 * classified are written to ``unknown``; the caller classifies them (their lines are EXACT).
 * ``overflow``: 1 when the hit arrays were too small, 2 when the per-line arrays were (or
 * both); the caller runs the block again with larger ones. ``key``: no items for an unkeyed
 * manifest, or the two uint64 items (k0, k1) of a keyed manifest's SipHash-2-4 key, applied to
 * every 5-gram and window hash before it is looked up (the manifest holds keyed hashes).
 * ``vocab``: None, or the rewording pass (a RewordPass) whose rules read the words of the CLEAN
 * and HITS records: ``words`` is then WordOut's arrays as bytes (W_HASH, ...), else None.
 */
static PyObject *filter_jsonl(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"block", 0, 1},         {"keys", 0, 1},          {"cls", 0, 1},
               {"lower", 0, 4},         {"is_alnum", 0, 1},      {"gram_hashes", 0, 8},
               {"gram_slots", 0, 8},    {"gram_chain", 0, 8},    {"gram_bits", 0, 8},
               {"gram_line", 1, 8},     {"gram_at", 1, 8},       {"gram_posting", 1, 8},
               {"window_hashes", 0, 8}, {"window_slots", 0, 8},  {"window_chain", 0, 8},
               {"window_bits", 0, 8},   {"window_line", 1, 8},   {"window_at", 1, 8},
               {"window_posting", 1, 8}, {"line_end", 1, 8},     {"status", 1, 1},
               {"line_chars", 1, 8},    {"unknown", 1, 4},       {"key", 0, 8}};
    const Py_ssize_t n = 24;
    if (nargs != n + 3) {
        PyErr_Format(PyExc_TypeError, "filter_jsonl: expected %zd arguments", n + 3);
        return NULL;
    }
    RewordPass *vocab = NULL;
    if (objs[n + 2] != Py_None) {
        if (!PyObject_TypeCheck(objs[n + 2], &RewordPassType)) {
            PyErr_SetString(PyExc_TypeError, "filter_jsonl: vocab must be None or a RewordPass");
            return NULL;
        }
        vocab = (RewordPass *)objs[n + 2];
    }
    int use_windows = PyObject_IsTrue(objs[n]);
    long mode = PyLong_AsLong(objs[n + 1]);
    if (use_windows < 0 || (mode == -1 && PyErr_Occurred())) return NULL;
    if (mode != READ_TEXT && mode != READ_KEYS && mode != READ_ALL) {
        PyErr_SetString(PyExc_ValueError, "filter_jsonl: mode must be READ_TEXT, READ_KEYS or READ_ALL");
        return NULL;
    }
    if (take("filter_jsonl", objs, n, a, n) < 0) return NULL;
    Walk walk;
    memset(&walk, 0, sizeof walk);
    walk.mode = (int)mode;
    if (mode == READ_KEYS && set_keys(&walk, PTR(a[1], u8), COUNT(a[1])) < 0) {
        PyErr_Format(PyExc_ValueError, "filter_jsonl: at most %d keys", MAX_KEYS);
        release(a, n);
        return NULL;
    }
    HashSet grams, windows;
    Py_ssize_t capacity = COUNT(a[19]);
    if (check_tables("filter_jsonl", &a[2], 3) < 0 || hashset_from("filter_jsonl", &a[5], &grams) < 0 ||
        hashset_from("filter_jsonl", &a[12], &windows) < 0 || too_short("filter_jsonl", &a[20], capacity) ||
        too_short("filter_jsonl", &a[21], capacity)) {
        release(a, n);
        return NULL;
    }
    if (COUNT(a[23]) != 0 && COUNT(a[23]) != 2) {
        PyErr_SetString(PyExc_ValueError, "filter_jsonl: key must hold no items (unkeyed) or 2 (k0, k1)");
        release(a, n);
        return NULL;
    }
    Pending pending;
    pending.n = 0;
    if (COUNT(a[23]) == 2) {
        pending.k0 = PTR(a[23], u64)[0];
        pending.k1 = PTR(a[23], u64)[1];
    }
    const u8 *block = PTR(a[0], u8);
    Py_ssize_t size = COUNT(a[0]);
    Context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cls = PTR(a[2], u8);
    ctx.lower = PTR(a[3], u32);
    ctx.is_alnum = PTR(a[4], u8);
    ctx.grams = &grams;
    ctx.windows = use_windows ? &windows : NULL;
    ctx.pending = COUNT(a[23]) == 2 ? &pending : NULL;
    ctx.unknown = PTR(a[22], u32);
    ctx.unknown_capacity = COUNT(a[22]);
    /* Any of them: a table that has not met one yet has it UNKNOWN, which sends its line exact. */
    ctx.markup = ctx.cls['&'] == CLS_MARKUP || ctx.cls['<'] == CLS_MARKUP || ctx.cls['['] == CLS_MARKUP;
    WordOut words;
    memset(&words, 0, sizeof words);
    words.vocab = vocab;
    ctx.words = vocab != NULL ? &words : NULL;
    Py_ssize_t word_mark[W_SPELLED];
    Segments segs;
    memset(&segs, 0, sizeof segs);
    walk.segs = &segs;
    i64 *line_end = PTR(a[19], i64), *line_chars = PTR(a[21], i64);
    u8 *status = PTR(a[20], u8);
    Py_ssize_t lines = 0;
    int too_many_lines = 0;
    if (vocab != NULL) vocab->running++; /* its vocabulary is read below, without the GIL */
    Py_BEGIN_ALLOW_THREADS
    const u8 *p = block, *end = block + size;
    while (p < end) {
        if (lines >= capacity) { too_many_lines = 1; break; }
        const u8 *nl = memchr(p, '\n', (size_t)(end - p));
        const u8 *stop = nl ? nl + 1 : end, *record_end = stop;
        Py_ssize_t grams_before = grams.hits, windows_before = windows.hits, chars = 0, more = 0;
        int s;
        if (is_blank(p, stop)) {
            s = LINE_BLANK;
        } else {
            if (mode == READ_TEXT) {
                record_end = text_record_end(p, stop, end, &more);
                if (more >= capacity - lines) { too_many_lines = 1; break; }
            }
            Cursor c = {p, stop};
            segs.used = 0;
            segs.count = 0;
            int read = mode == READ_TEXT ? read_text_record(p, record_end, &segs) : read_record(&c, &walk);
            if (read >= 0 && ctx.markup) rewrite_segments(&segs);
            chars = segs.used;
            word_marks(&words, word_mark);
            if (read < 0 || hash_segments(&ctx, &segs, lines) != TEXT_OK) {
                word_rollback(&words, word_mark);
                s = LINE_EXACT;
            } else {
                s = grams.hits > grams_before || windows.hits > windows_before ? LINE_HITS : LINE_CLEAN;
            }
        }
        if (s != LINE_HITS) { /* the hits of a record going exact are the exact path's to find */
            grams.hits = grams_before;
            windows.hits = windows_before;
        }
        if (grams.overflow || windows.overflow) break;
        status[lines] = (u8)s;
        line_chars[lines] = chars;
        line_end[lines] = stop - block;
        lines++;
        for (; more > 0; more--) { /* a paragraph's later lines (room checked above) */
            nl = memchr(stop, '\n', (size_t)(record_end - stop));
            stop = nl ? nl + 1 : record_end;
            status[lines] = LINE_MORE;
            line_chars[lines] = 0;
            line_end[lines] = stop - block;
            lines++;
        }
        p = stop;
    }
    Py_END_ALLOW_THREADS
    if (vocab != NULL) vocab->running--;
    free(segs.text.data);
    free(segs.ends);
    free(segs.key);
    free(ctx.alnum.data);
    Py_ssize_t unknown_n = ctx.unknown_count;
    int overflow = (grams.overflow || windows.overflow) | (too_many_lines << 1);
    Py_ssize_t gram_hits = grams.hits, window_hits = windows.hits;
    release(a, n);
    PyObject *word_arrays = word_tuple(&words, vocab != NULL);
    if (word_arrays == NULL) return NULL;
    return Py_BuildValue("nnnniN", lines, unknown_n, gram_hits, window_hits, overflow, word_arrays);
}

/* For tests: the segments the filter reads from one line in ``mode`` (READ_ALL or READ_KEYS with
 * NUL-separated ``keys``), as a list of str, or None where the filter hands the line to the
 * exact path whatever its text (invalid JSON, a listed key missing, repeated or not a string). */
static PyObject *decode_segments(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"line", 0, 1}, {"keys", 0, 1}};
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "decode_segments(line, keys, mode)");
        return NULL;
    }
    long mode = PyLong_AsLong(objs[2]);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    if (mode != READ_KEYS && mode != READ_ALL) {
        PyErr_SetString(PyExc_ValueError, "decode_segments: mode must be READ_KEYS or READ_ALL");
        return NULL;
    }
    if (take("decode_segments", objs, 2, a, 2) < 0) return NULL;
    Walk walk;
    Segments segs;
    memset(&walk, 0, sizeof walk);
    memset(&segs, 0, sizeof segs);
    walk.mode = (int)mode;
    walk.segs = &segs;
    PyObject *result = NULL;
    if (mode == READ_KEYS && set_keys(&walk, PTR(a[1], u8), COUNT(a[1])) < 0) {
        PyErr_Format(PyExc_ValueError, "decode_segments: at most %d keys", MAX_KEYS);
    } else {
        Cursor c = {PTR(a[0], u8), PTR(a[0], u8) + COUNT(a[0])};
        if (read_record(&c, &walk) < 0) {
            result = Py_NewRef(Py_None);
        } else if ((result = PyList_New(segs.count)) != NULL) {
            Py_ssize_t start = 0;
            for (Py_ssize_t i = 0; i < segs.count; i++) {
                PyObject *text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, segs.text.data + start,
                                                           segs.ends[i] - start);
                if (text == NULL) {
                    Py_CLEAR(result);
                    break;
                }
                PyList_SET_ITEM(result, i, text);
                start = segs.ends[i];
            }
        }
    }
    free(segs.text.data);
    free(segs.ends);
    free(segs.key);
    release(a, 2);
    return result;
}

/* may_repeat_keys(line) -> bool: whether some object of the JSON line may hold a key twice
 * (True also for a key with escapes, an object of many keys, and whatever the walk does not
 * read, such as deep nesting: the caller then parses the line with every pair kept). */
static PyObject *may_repeat_keys(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"line", 0, 1}};
    if (take("may_repeat_keys", objs, nargs, a, 1) < 0) return NULL;
    Walk walk;
    memset(&walk, 0, sizeof walk);
    walk.mode = READ_ALL; /* with no segments: validate only */
    int maybe;
    Py_BEGIN_ALLOW_THREADS
    Cursor c = {PTR(a[0], u8), PTR(a[0], u8) + COUNT(a[0])};
    maybe = read_record(&c, &walk) < 0 || walk.repeated;
    Py_END_ALLOW_THREADS
    release(a, 1);
    return PyBool_FromLong(maybe);
}

/* line_ends(block, out) -> lines: the offset just past each line of ``block`` (a last line
 * without a newline ends at the block's end), written to ``out`` as far as it has room; the
 * return value is the number of lines, so a caller whose ``out`` was too small can size it. */
static PyObject *line_ends(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"block", 0, 1}, {"out", 1, 8}};
    if (take("line_ends", objs, nargs, a, 2) < 0) return NULL;
    const u8 *p = PTR(a[0], u8), *end = p + COUNT(a[0]), *start = p;
    i64 *out = PTR(a[1], i64);
    Py_ssize_t capacity = COUNT(a[1]), lines = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        const u8 *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
        if (lines < capacity) out[lines] = p - start;
        lines++;
    }
    Py_END_ALLOW_THREADS
    release(a, 2);
    return PyLong_FromSsize_t(lines);
}

/* count_lines(block) -> (lines, blank): the newlines in ``block`` and how many of the lines
 * they end are whitespace only (not records); a last line without a newline is not counted.
 * The parallel planner numbers each window's lines and records with it. */
static PyObject *count_lines(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"block", 0, 1}};
    if (take("count_lines", objs, nargs, a, 1) < 0) return NULL;
    const u8 *p = PTR(a[0], u8), *end = p + COUNT(a[0]);
    Py_ssize_t lines = 0, blank = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        const u8 *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL) break;
        lines++;
        blank += is_blank(p, nl + 1);
        p = nl + 1;
    }
    Py_END_ALLOW_THREADS
    release(a, 1);
    return Py_BuildValue("nn", lines, blank);
}

/* glued_candidates(data, min_joins, max_punct, max_gap) -> bytes: core/spec/glued.py's
 * ``candidates`` in one pass over the bytes: the same int64 offsets in the same order (the tests
 * compare the two on random bytes). A join is an ASCII capital after a lowercase letter or a digit,
 * a digit after a letter (either looked for back across up to ``max_punct`` + 1 bytes of
 * punctuation, any byte not a letter, digit or space; more of it counts as a letter), a capital
 * after a capital when a lowercase letter follows, or the first byte of U+180E; at offset 0 only
 * U+180E's. A run of joins is cut by a space, or a JSON escape \n \t \r whose backslash is not
 * after another, between two of them, or by more than ``max_gap`` bytes; the offset of the first
 * join of every run of ``min_joins`` or more is returned. The constants are glued.py's.
 *
 * Each 64 bytes become bit masks of their classes (16 bytes at a time with SSE2; 8 at a time for
 * the last bytes, or without SSE2), the joins are found with shifts of those, and only the joins
 * (and the capitals and digits after punctuation, looked back at) are visited one by one: few
 * bytes of most text. */
static PyObject *glued_candidates(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    enum { S, LOW, UP, DIG, P };                                         /* byte classes */
    enum { M_LOW, M_UP, M_DIG, M_SPACE, M_SLASH, M_NTR, M_LEAD, MASKS }; /* their bit masks */
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "glued_candidates: expected (data, min_joins, max_punct, max_gap)");
        return NULL;
    }
    Py_ssize_t min_joins = PyLong_AsSsize_t(objs[1]), max_punct = PyLong_AsSsize_t(objs[2]),
               max_gap = PyLong_AsSsize_t(objs[3]);
    if (PyErr_Occurred()) return NULL;
    if (min_joins < 1 || max_punct < 0 || max_punct >= PY_SSIZE_T_MAX || max_gap < 0) {
        PyErr_SetString(PyExc_ValueError, "glued_candidates: min_joins must be 1 or more, the others 0 or more");
        return NULL;
    }
    Arg a[] = {{"data", 0, 1}};
    if (take("glued_candidates", objs, nargs, a, 1) < 0) return NULL;
    const u8 *p = PTR(a[0], u8);
    Py_ssize_t n = COUNT(a[0]);
    Out out = {NULL, 0, 0};
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    u8 cls[256], bits[256];
    memset(cls, P, sizeof cls);
    memset(cls + 'a', LOW, 26);
    memset(cls + 'A', UP, 26);
    memset(cls + '0', DIG, 10);
    cls[' '] = cls['\t'] = cls['\n'] = cls['\r'] = cls['\v'] = cls['\f'] = S;
    for (int b = 0; b < 256; b++) {
        int c = cls[b];
        bits[b] = (u8)((c == LOW) << M_LOW | (c == UP) << M_UP | (c == DIG) << M_DIG | (c == S) << M_SPACE |
                       (b == '\\') << M_SLASH | (b == 'n' || b == 't' || b == 'r') << M_NTR | (b == 0xE1) << M_LEAD);
    }
    u64 last[MASKS] = {0}; /* the previous 64 bytes' masks: nothing before offset 0 (a space) */
    Py_ssize_t prev = 0, run = 0; /* the last join, and how many joins its run holds so far */
    i64 run_start = 0;
    int spaced = 0; /* a space since the last join */
    for (Py_ssize_t base = 0; base < n && !failed; base += 64) {
        const u8 *q = p + base;
        Py_ssize_t len = n - base < 64 ? n - base : 64;
        u64 m[MASKS] = {0};
#ifdef __SSE2__
        if (len == 64) {
            /* x in [lo, lo + count) as a signed comparison after moving lo to -128 */
#define GLUED_RANGE(x, lo, count) \
    _mm_cmplt_epi8(_mm_add_epi8((x), _mm_set1_epi8((char)(0x80 - (lo)))), _mm_set1_epi8((char)(-128 + (count))))
#define GLUED_BYTE(x, b) _mm_cmpeq_epi8((x), _mm_set1_epi8((char)(b)))
            for (int h = 0; h < 4; h++) {
                __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(q + 16 * h));
                __m128i v[MASKS] = {
                    GLUED_RANGE(x, 'a', 26),
                    GLUED_RANGE(x, 'A', 26),
                    GLUED_RANGE(x, '0', 10),
                    _mm_or_si128(GLUED_RANGE(x, '\t', 5), GLUED_BYTE(x, ' ')),
                    GLUED_BYTE(x, '\\'),
                    _mm_or_si128(_mm_or_si128(GLUED_BYTE(x, 'n'), GLUED_BYTE(x, 't')), GLUED_BYTE(x, 'r')),
                    GLUED_BYTE(x, 0xE1),
                };
                for (int k = 0; k < MASKS; k++) m[k] |= (u64)(unsigned)_mm_movemask_epi8(v[k]) << (16 * h);
            }
#undef GLUED_RANGE
#undef GLUED_BYTE
        } else
#endif
        {
            /* eight bytes' flags in a word, then each flag's eight bits gathered by a multiply (the
             * bits 8k move to 56 + k, no two products overlapping); the last bytes padded with NUL */
            u8 pad[64] = {0};
            const u8 *r = len == 64 ? q : memcpy(pad, q, (size_t)len);
            for (int g = 0; g < 8; g++) {
                u64 w = 0;
                for (int k = 0; k < 8; k++) w |= (u64)bits[r[8 * g + k]] << (8 * k);
                for (int c = 0; c < MASKS; c++) m[c] |= ((w >> c & ONES) * 0x0102040810204080ULL) >> 56 << (8 * g);
            }
        }
        u64 prev_low = m[M_LOW] << 1 | last[M_LOW] >> 63, prev_up = m[M_UP] << 1 | last[M_UP] >> 63,
            prev_dig = m[M_DIG] << 1 | last[M_DIG] >> 63,
            prev_space = m[M_SPACE] << 1 | last[M_SPACE] >> 63,
            prev_slash = m[M_SLASH] << 1 | last[M_SLASH] >> 63,
            prev2_slash = m[M_SLASH] << 2 | last[M_SLASH] >> 62;
        /* offset 0 has no byte before it: it is none of these, so neither a join nor looked back from */
        u64 prev_punct = ~(prev_low | prev_up | prev_dig | prev_space) & ~(base == 0 ? (u64)1 : 0);
        u64 next_low = m[M_LOW] >> 1 | (u64)(base + 64 < n && cls[q[64]] == LOW) << 63;
        u64 joins = (m[M_UP] & (prev_low | prev_dig | (prev_up & next_low))) | (m[M_DIG] & (prev_low | prev_up));
        u64 cuts = m[M_SPACE] | (m[M_NTR] & prev_slash & ~prev2_slash);
        for (u64 look = (m[M_UP] | m[M_DIG]) & prev_punct; look; look &= look - 1) {
            int b = __builtin_ctzll(look);
            Py_ssize_t i = base + b;
            u8 before = LOW; /* back across the punctuation: to the start (a space) or past it (a letter) */
            for (Py_ssize_t j = i - 2; j >= i - 1 - max_punct; j--) {
                if (j < 0 || cls[p[j]] != P) {
                    before = j < 0 ? S : cls[p[j]];
                    break;
                }
            }
            if (cls[q[b]] == UP ? before == LOW || before == DIG : before == LOW || before == UP) joins |= (u64)1 << b;
        }
        for (u64 lead = m[M_LEAD]; lead; lead &= lead - 1) {
            int b = __builtin_ctzll(lead);
            if (base + b + 2 < n && q[b + 1] == 0xA0 && q[b + 2] == 0x8E) joins |= (u64)1 << b; /* U+180E */
        }
        for (; joins; joins &= joins - 1) {
            int b = __builtin_ctzll(joins);
            Py_ssize_t i = base + b;
            spaced |= (cuts & (((u64)1 << b) - 1)) != 0;
            cuts &= ~(((u64)2 << b) - 1); /* b = 63: all of them */
            if (run > 0 && !spaced && i - prev <= max_gap) {
                run++;
            } else {
                if (run >= min_joins) failed |= out_push(&out, &run_start, 8) < 0;
                run_start = i;
                run = 1;
            }
            prev = i;
            spaced = 0;
        }
        spaced |= cuts != 0;
        memcpy(last, m, sizeof last);
    }
    if (!failed && run >= min_joins) failed = out_push(&out, &run_start, 8) < 0;
    Py_END_ALLOW_THREADS
    release(a, 1);
    if (failed) {
        free(out.data);
        return PyErr_NoMemory();
    }
    return out_bytes(&out);
}

/* The rewording rules' pass: a type of its own, in its own file (it uses the helpers above). */
#include "reword.c"

/* ------------------------------------------------------------------------------------------ */
/* Gapped spans: chaining a pair's exact runs across small gaps (core/match/chains.py).         */

/* The first index m of by_end[lo..hi) whose run ends at or after (pair, end); by_end sorts the
 * runs by (pair, i1). */
static Py_ssize_t chain_lower(const i64 *pair, const i64 *i1, const i64 *by_end, Py_ssize_t n, i64 p,
                              i64 end) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        i64 r = by_end[mid];
        if (pair[r] < p || (pair[r] == p && i1[r] < end)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* chain_runs(pair, i0, i1, j0, j1, by_end, params, start): for each exact run (item words
 * [i0, i1), record words [j0, j1); runs sorted by pair), the first item word of the longest
 * span ending with it that chains runs back through their cheapest predecessors while the
 * links' cost fits a budget. params: max_link, fixed, per, every, max_links (see
 * pure_kernels.chain_runs, which computes the same). */
static PyObject *chain_runs(PyObject *self, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"pair", 0, 8}, {"i0", 0, 8},     {"i1", 0, 8},     {"j0", 0, 8},
               {"j1", 0, 8},   {"by_end", 0, 8}, {"params", 0, 8}, {"start", 1, 8}};
    const Py_ssize_t na = sizeof a / sizeof a[0];
    if (take("chain_runs", objs, nargs, a, na) < 0) return NULL;
    Py_ssize_t n = COUNT(a[0]);
    i64 *pred = NULL, *cost = NULL;
    for (Py_ssize_t k = 1; k < na; k++) {
        if (k == 6 ? too_short("chain_runs", &a[k], 5) : too_short("chain_runs", &a[k], n)) goto fail;
    }
    const i64 *pair = PTR(a[0], i64), *i0 = PTR(a[1], i64), *i1 = PTR(a[2], i64);
    const i64 *j0 = PTR(a[3], i64), *j1 = PTR(a[4], i64), *by_end = PTR(a[5], i64), *prm = PTR(a[6], i64);
    i64 *start = PTR(a[7], i64);
    i64 max_link = prm[0], fixed = prm[1], per = prm[2], every = prm[3], max_links = prm[4];
    if (max_link < 0 || max_link > 64 || fixed < 0 || per < 0 || every < 1 || max_links < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "chain_runs: params must be max_link 0..64, fixed >= 0, per >= 0, every >= 1, links >= 0");
        goto fail;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (by_end[k] < 0 || by_end[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "chain_runs: by_end must hold run indices");
            goto fail;
        }
    }
    pred = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(i64));
    cost = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(i64));
    if (pred == NULL || cost == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        i64 best = -1, best_cost = max_link + 1, best_len = -1;
        for (i64 t = 0; t <= max_link; t++) {
            Py_ssize_t m = chain_lower(pair, i1, by_end, n, pair[b], i0[b] - t);
            for (; m < n && pair[by_end[m]] == pair[b] && i1[by_end[m]] == i0[b] - t; m++) {
                i64 r = by_end[m];
                i64 gj = j0[b] - j1[r];
                if (r == b || gj < 0) continue;
                i64 c = gj > t ? gj : t;
                if (c < 1) c = 1;
                if (c > max_link) continue;
                i64 len = i1[r] - i0[r];
                if (c < best_cost || (c == best_cost && (len > best_len || (len == best_len && r < best)))) {
                    best = r, best_cost = c, best_len = len;
                }
            }
        }
        pred[b] = best, cost[b] = best_cost;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        i64 cur = b, spent = 0;
        start[b] = i0[b];
        for (i64 step = 0; step < max_links && pred[cur] >= 0; step++) {
            i64 back = pred[cur];
            spent += cost[cur];
            if (spent * every > fixed * every + per * i1[b]) break;
            if (spent * every <= fixed * every + per * (i1[b] - i0[back])) start[b] = i0[back];
            cur = back;
        }
    }
    PyMem_Free(pred);
    PyMem_Free(cost);
    release(a, na);
    Py_RETURN_NONE;
fail:
    PyMem_Free(pred);
    PyMem_Free(cost);
    release(a, na);
    return NULL;
}

static PyMethodDef methods[] = {
    {"count_tokens", (PyCFunction)(void (*)(void))count_tokens, METH_FASTCALL, "Maximal runs of non-space code points."},
    {"words_pass", (PyCFunction)(void (*)(void))words_pass, METH_FASTCALL, "Find, normalise and hash every word."},
    {"alnum_pass", (PyCFunction)(void (*)(void))alnum_pass, METH_FASTCALL, "Each record's alnum view."},
    {"markup_pass", (PyCFunction)(void (*)(void))markup_pass, METH_FASTCALL, "Spec v4's markup rewrite of each record."},
    {"windows_pass", (PyCFunction)(void (*)(void))windows_pass, METH_FASTCALL, "Hash every 50-character window."},
    {"table_build", (PyCFunction)(void (*)(void))table_build, METH_FASTCALL, "Fill an open-addressing table."},
    {"table_first", (PyCFunction)(void (*)(void))table_first, METH_FASTCALL, "First posting per query."},
    {"table_fill", (PyCFunction)(void (*)(void))table_fill, METH_FASTCALL, "Every (query, posting) pair."},
    {"bits_build", (PyCFunction)(void (*)(void))bits_build, METH_FASTCALL, "A one-hash bit set of hashes."},
    {"siphash24", (PyCFunction)(void (*)(void))siphash24, METH_FASTCALL, "SipHash-2-4 of each 8-byte hash."},
    {"siphash24_variant", (PyCFunction)(void (*)(void))siphash24_variant, METH_FASTCALL, "siphash24 through one loop (tests)."},
    {"filter_jsonl", (PyCFunction)(void (*)(void))filter_jsonl, METH_FASTCALL, "The scan's JSONL prefilter."},
    {"line_ends", (PyCFunction)(void (*)(void))line_ends, METH_FASTCALL, "Offsets just past each line."},
    {"count_lines", (PyCFunction)(void (*)(void))count_lines, METH_FASTCALL, "Newlines and blank lines."},
    {"decode_segments", (PyCFunction)(void (*)(void))decode_segments, METH_FASTCALL, "The filter's segments of one line (tests)."},
    {"may_repeat_keys", (PyCFunction)(void (*)(void))may_repeat_keys, METH_FASTCALL, "Whether a JSON line may repeat a key."},
    {"glued_candidates", (PyCFunction)(void (*)(void))glued_candidates, METH_FASTCALL, "Where glued tokens may be (core/spec/glued.py)."},
    {"chain_runs", (PyCFunction)(void (*)(void))chain_runs, METH_FASTCALL, "Chain a pair's runs across small gaps."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled kernels for contam-guard.", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    /* Which SipHash loop this CPU runs (exported for the tests and the curious). */
    if (PyModule_AddStringConstant(m, "siphash_simd", choose_siphash()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (add_reword_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObject(m, "CHAR_BASE", PyLong_FromUnsignedLongLong(CHAR_BASE)) < 0 ||
        PyModule_AddObject(m, "WORD_BASE", PyLong_FromUnsignedLongLong(WORD_BASE)) < 0 ||
        PyModule_AddObject(m, "LEN_MIX", PyLong_FromUnsignedLongLong(LEN_MIX)) < 0 ||
        PyModule_AddIntConstant(m, "WINDOW_CHARS", WINDOW_CHARS) < 0 ||
        PyModule_AddIntConstant(m, "GRAM_N", GRAM_N) < 0 ||
        PyModule_AddIntConstant(m, "CLS_UNKNOWN", CLS_UNKNOWN) < 0 ||
        PyModule_AddIntConstant(m, "CLS_ALNUM", CLS_ALNUM) < 0 ||
        PyModule_AddIntConstant(m, "CLS_KEPT", CLS_KEPT) < 0 ||
        PyModule_AddIntConstant(m, "CLS_SPACE", CLS_SPACE) < 0 ||
        PyModule_AddIntConstant(m, "CLS_REMOVED", CLS_REMOVED) < 0 ||
        PyModule_AddIntConstant(m, "CLS_SPECIAL", CLS_SPECIAL) < 0 ||
        PyModule_AddIntConstant(m, "CLS_SOLO", CLS_SOLO) < 0 ||
        PyModule_AddIntConstant(m, "CLS_MARKUP", CLS_MARKUP) < 0 ||
        PyModule_AddIntConstant(m, "LINE_BLANK", LINE_BLANK) < 0 ||
        PyModule_AddIntConstant(m, "LINE_CLEAN", LINE_CLEAN) < 0 ||
        PyModule_AddIntConstant(m, "LINE_HITS", LINE_HITS) < 0 ||
        PyModule_AddIntConstant(m, "LINE_EXACT", LINE_EXACT) < 0 ||
        PyModule_AddIntConstant(m, "LINE_MORE", LINE_MORE) < 0 ||
        PyModule_AddIntConstant(m, "PARAGRAPH_BYTES", PARAGRAPH_BYTES) < 0 ||
        PyModule_AddIntConstant(m, "READ_TEXT", READ_TEXT) < 0 ||
        PyModule_AddIntConstant(m, "READ_KEYS", READ_KEYS) < 0 ||
        PyModule_AddIntConstant(m, "READ_ALL", READ_ALL) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
