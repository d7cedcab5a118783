/*
 * The rewording rules' pass (contam_guard/core/reword), compiled: from the word hashes the n-gram
 * pass made, each unit's number-masked words and their 5-grams (the ``numbers`` rule), and its
 * content features scored against every item (the ``reworded`` rule), in one loop per unit.
 *
 * It computes exactly what the numpy path computes (contam_guard/core/reword/vocab.py for the
 * streams, contam_guard/core/reword/matching.py for the runs' hits and the scores, summing the same
 * doubles in the same order); tests/reword/test_stage.py compares the two on random
 * units, keyed and unkeyed. This file is compiled as part of native.c (included there), whose
 * buffer checks, hash table and SipHash it uses.
 *
 * ``RewordPass`` holds what a scan keeps between batches: the vocabulary (each distinct word's
 * masked form and content features, filled from Python, which stems words: ``add_words``), the
 * manifest's masked 5-grams (``set_grams``) and each (set, view)'s content features arranged
 * for the prefix filter (``add_target``). ``run`` reads it without the GIL; ``add_words``,
 * ``set_grams`` and ``add_target`` refuse to change it while a ``run`` is in progress, so no
 * buffer is freed or moved under a loop. The type's layout and the vocabulary's lookup are in
 * reword_pass.h, which the prefilter reads too.
 */

/* ---- the vocabulary (growing it; its lookup, vocab_row, is in reword_pass.h) -------------- */

static void vocab_put(u64 *table, u64 mask, u64 key, i64 row) {
    u64 slot = key & mask;
    while (table[2 * slot + 1] != 0) slot = (slot + 1) & mask;
    table[2 * slot] = key;
    table[2 * slot + 1] = (u64)row + 1;
}

static int vocab_rehash(RewordPass *s, Py_ssize_t slots) {
    u64 *table = calloc(2 * (size_t)slots, sizeof(u64));
    if (table == NULL) return -1;
    for (Py_ssize_t r = 0; r < s->rows; r++) vocab_put(table, (u64)slots - 1, s->word[r], r);
    free(s->table);
    s->table = table;
    s->slots = slots;
    return 0;
}

#define GROW(field, type, count) \
    do { type *p_ = realloc(s->field, sizeof(type) * (size_t)(count)); if (p_ == NULL) return -1; s->field = p_; } while (0)

static int vocab_reserve(RewordPass *s, Py_ssize_t rows, Py_ssize_t inside) {
    if (rows > s->row_capacity) {
        Py_ssize_t capacity = s->row_capacity ? s->row_capacity : 1024;
        while (capacity < rows) capacity *= 2;
        GROW(word, u64, capacity); GROW(masked, u64, capacity); GROW(value_raw, u64, capacity);
        GROW(stem_raw, u64, capacity); GROW(value_len, i64, capacity); GROW(stem_len, i64, capacity);
        GROW(number, u8, capacity); GROW(inside_first, i64, capacity + 1);
        s->row_capacity = capacity;
    }
    if (inside > s->inside_capacity) {
        Py_ssize_t capacity = s->inside_capacity ? s->inside_capacity : 256;
        while (capacity < inside) capacity *= 2;
        GROW(inside, u64, capacity);
        s->inside_capacity = capacity;
    }
    if (s->inside_first != NULL && s->rows == 0) s->inside_first[0] = 0;
    /* at most half the slots used: probes stay short */
    if (2 * rows > s->slots) {
        Py_ssize_t slots = s->slots ? s->slots : 2048;
        while (2 * rows > slots) slots *= 2;
        if (vocab_rehash(s, slots) < 0) return -1;
    }
    return 0;
}

static int busy(RewordPass *s, const char *func) {
    if (s->running) {
        PyErr_Format(PyExc_RuntimeError, "RewordPass.%s: a run is in progress", func);
        return 1;
    }
    return 0;
}

/* add_words(keys, masked, number, value_raw, value_len, stem_raw, stem_len, inside_first,
 * inside): rows for new words (a key already present is skipped); see reword.vocab.Entries. */
static PyObject *reword_add_words(RewordPass *s, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"keys", 0, 8},     {"masked", 0, 8},    {"number", 0, 1},
               {"value_raw", 0, 8}, {"value_len", 0, 8}, {"stem_raw", 0, 8},
               {"stem_len", 0, 8}, {"inside_first", 0, 8}, {"inside", 0, 8}};
    const Py_ssize_t n = 9;
    if (busy(s, "add_words") || take("add_words", objs, nargs, a, n) < 0) return NULL;
    Py_ssize_t count = COUNT(a[0]);
    for (Py_ssize_t k = 1; k < 7; k++) {
        if (COUNT(a[k]) != count) {
            PyErr_Format(PyExc_ValueError, "add_words: %s must hold as many items as keys", a[k].name);
            release(a, n);
            return NULL;
        }
    }
    const i64 *first = PTR(a[7], i64);
    const i64 *value_len = PTR(a[4], i64), *stem_len = PTR(a[6], i64);
    if (COUNT(a[7]) != count + 1 || check_offsets("add_words", "inside_first", first, count + 1, COUNT(a[8])) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "add_words: inside_first must hold keys + 1 items");
        release(a, n);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        if (value_len[k] < 0 || stem_len[k] < 0 || value_len[k] > (1 << 20) || stem_len[k] > (1 << 20)) {
            PyErr_SetString(PyExc_ValueError, "add_words: lengths must be 0 .. 2**20");
            release(a, n);
            return NULL;
        }
    }
    if (vocab_reserve(s, s->rows + count, s->inside_count + COUNT(a[8])) < 0) {
        release(a, n);
        return PyErr_NoMemory();
    }
    const u64 *keys = PTR(a[0], u64), *inside = PTR(a[8], u64);
    u64 mask = (u64)s->slots - 1;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (vocab_row(s, keys[k]) >= 0) continue;
        Py_ssize_t r = s->rows++;
        s->word[r] = keys[k];
        s->masked[r] = PTR(a[1], u64)[k];
        s->number[r] = PTR(a[2], u8)[k] != 0;
        s->value_raw[r] = PTR(a[3], u64)[k];
        s->value_len[r] = value_len[k];
        s->stem_raw[r] = PTR(a[5], u64)[k];
        s->stem_len[r] = stem_len[k];
        for (i64 i = first[k]; i < first[k + 1]; i++) s->inside[s->inside_count++] = inside[i];
        s->inside_first[r + 1] = s->inside_count;
        vocab_put(s->table, mask, keys[k], r);
    }
    release(a, n);
    Py_RETURN_NONE;
}

/* missing(word_hashes) -> bytes: the distinct hashes that have no row yet (uint64, in order of
 * first appearance). */
static PyObject *reword_missing(RewordPass *s, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"word_hashes", 0, 8}};
    if (take("missing", objs, nargs, a, 1) < 0) return NULL;
    const u64 *hashes = PTR(a[0], u64);
    Py_ssize_t count = COUNT(a[0]), slots = 64;
    while (slots < 2 * count) slots *= 2;
    Out out = {0};
    int failed = 0;
    s->running++;
    Py_BEGIN_ALLOW_THREADS
    u64 *seen_key = calloc((size_t)slots, sizeof(u64));
    u8 *seen = calloc((size_t)slots, 1);
    u64 mask = (u64)slots - 1;
    failed = seen_key == NULL || seen == NULL;
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        u64 h = hashes[i];
        if (vocab_row(s, h) >= 0) continue;
        u64 slot = h & mask;
        while (seen[slot] && seen_key[slot] != h) slot = (slot + 1) & mask;
        if (seen[slot]) continue;
        seen[slot] = 1;
        seen_key[slot] = h;
        failed = out_push(&out, &h, 8) < 0;
    }
    free(seen_key);
    free(seen);
    Py_END_ALLOW_THREADS
    s->running--;
    release(a, 1);
    if (failed) {
        free(out.data);
        return PyErr_NoMemory();
    }
    return out_bytes(&out);
}

/* A feature's number in target ``t`` (-1: no item has it). */
static inline i64 feature_of(const RewordTarget *t, u64 h) {
    u64 slot = h & t->map_mask;
    for (u64 probes = 0; probes <= t->map_mask; probes++) {
        i64 f = t->map_f[slot];
        if (f == 0) return -1;
        if (t->map_key[slot] == h) return f - 1;
        slot = (slot + 1) & t->map_mask;
    }
    return -1;
}

/* The feature map and the items' key ranges of a new target (-1: out of memory). */
static int target_tables(RewordTarget *t) {
    u64 slots = 16;
    while (slots < 2 * (u64)t->features) slots *= 2;
    t->map_key = calloc(slots, sizeof(u64));
    t->map_f = calloc(slots, sizeof(i64));
    t->item_first = calloc((size_t)t->items + 1, sizeof(i64));
    if (t->map_key == NULL || t->map_f == NULL || t->item_first == NULL) return -1;
    t->map_mask = slots - 1;
    for (Py_ssize_t f = 0; f < t->features; f++) {
        u64 slot = t->distinct[f] & t->map_mask;
        while (t->map_f[slot] != 0) slot = (slot + 1) & t->map_mask;
        t->map_key[slot] = t->distinct[f];
        t->map_f[slot] = f + 1;
    }
    t->item_feature = calloc((size_t)t->key_count + 1, sizeof(i64));
    if (t->item_feature == NULL) return -1;
    i64 span = t->features > 0 ? t->features : 1;
    Py_ssize_t k = 0, kept = 0;
    for (i64 item = 0; item < t->items; item++) {
        t->item_first[item] = kept;
        for (; k < t->key_count && t->keys[k] / span == item; k++) {
            if (k > 0 && t->keys[k] == t->keys[k - 1]) continue;
            t->item_feature[kept++] = t->keys[k] - item * span;
        }
    }
    t->item_first[t->items] = kept;
    return 0;
}

/* ---- the manifest's side -------------------------------------------------------------------- */

static void release_held(Py_buffer *held, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (held[i].obj != NULL) PyBuffer_Release(&held[i]);
    }
}

/* Keep the buffers of ``a`` for as long as the pass lives (moved into ``held``). */
static void keep(Arg *a, Py_ssize_t n, Py_buffer *held) {
    for (Py_ssize_t i = 0; i < n; i++) {
        held[i] = a[i].view;
        a[i].held = 0;
    }
}

/* set_grams(hashes, slots, chain, bits): the masked 5-grams' table (engine.table; as the
 * prefilter's, see hashset_from). */
static PyObject *reword_set_grams(RewordPass *s, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"hashes", 0, 8}, {"slots", 0, 8}, {"chain", 0, 8}, {"bits", 0, 8}};
    if (busy(s, "set_grams") || take("set_grams", objs, nargs, a, 4) < 0) return NULL;
    Py_ssize_t count = COUNT(a[0]), words = COUNT(a[3]);
    if (check_slots("set_grams", &a[1]) < 0 || too_short("set_grams", &a[2], count)) {
        release(a, 4);
        return NULL;
    }
    if (words < 1 || (words & (words - 1))) {
        PyErr_SetString(PyExc_ValueError, "set_grams: bits must be a power of two of words");
        release(a, 4);
        return NULL;
    }
    const i64 *chain = PTR(a[2], i64);
    for (Py_ssize_t p = 0; p < count; p++) {
        if (next_posting(chain, p, count) == -2) {
            release(a, 4);
            return corrupt_chain("set_grams");
        }
    }
    if (s->has_grams) release_held(s->gram_held, 4);
    s->gram_count = (u64)count;
    s->gram_hashes = PTR(a[0], u64);
    s->gram_slots = PTR(a[1], u64);
    s->gram_mask = (u64)COUNT(a[1]) - 1;
    s->gram_chain = chain;
    s->gram_bits = PTR(a[3], u64);
    s->gram_shift = bloom_shift(words);
    keep(a, 4, s->gram_held);
    s->has_grams = 1;
    Py_RETURN_NONE;
}

static int is_sorted_u64(const u64 *v, Py_ssize_t n, int strict) {
    for (Py_ssize_t i = 1; i < n; i++) {
        if (strict ? v[i] <= v[i - 1] : v[i] < v[i - 1]) return 0;
    }
    return 1;
}

/* add_target(distinct, weight, starts, prefix_item, prefix_weight, rest, item_weight, keys,
 *            first_item, unknown_weight, floor, bar, record_share[, kind]): one (set, view)'s content
 * features as reword.matching.Prefixes arranges them. ``distinct``: the features, sorted;
 * ``weight``: each one's IDF; prefix entries of feature f at starts[f]:starts[f+1] of
 * prefix_item (global items) and prefix_weight; ``rest`` and ``item_weight`` per item of the
 * view; ``keys``: sorted local item * len(distinct) + feature number of every (item, feature).
 * ``kind`` (default 0): which units score against it (``run``'s kind: prose 0, docstrings 1). */
static PyObject *reword_add_target(RewordPass *s, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[] = {{"distinct", 0, 8},     {"weight", 0, 8},   {"starts", 0, 8},
               {"prefix_item", 0, 8},  {"prefix_weight", 0, 8}, {"rest", 0, 8},
               {"item_weight", 0, 8},  {"keys", 0, 8}};
    const Py_ssize_t n = REWORD_TARGET_BUFFERS;
    if (nargs != n + 5 && nargs != n + 6) {
        PyErr_SetString(PyExc_TypeError, "add_target: expected 8 buffers, first_item, unknown_weight, floor, bar, record_share[, kind]");
        return NULL;
    }
    if (busy(s, "add_target")) return NULL;
    long kind = nargs == n + 6 ? PyLong_AsLong(objs[n + 5]) : 0;
    long long first_item = PyLong_AsLongLong(objs[n]);
    double unknown = PyFloat_AsDouble(objs[n + 1]), floor = PyFloat_AsDouble(objs[n + 2]);
    double bar = PyFloat_AsDouble(objs[n + 3]), share = PyFloat_AsDouble(objs[n + 4]);
    if (PyErr_Occurred()) return NULL;
    /* the weights are float64: take them as 8-byte items and check their format here */
    for (Py_ssize_t i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
        if (PyObject_GetBuffer(objs[i], &a[i].view, flags) < 0) {
            release(a, n);
            return NULL;
        }
        a[i].held = 1;
        int is_double = i == 1 || i == 4 || i == 5 || i == 6;
        const char *f = a[i].view.format;
        if (f != NULL && (*f == '<' || *f == '@' || *f == '=')) f++;
        int ok = a[i].view.itemsize == 8 && f != NULL && f[1] == '\0' &&
                 (is_double ? f[0] == 'd' : strchr("qQlLnN", f[0]) != NULL);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "add_target: %s must have %s items of 8 bytes", a[i].name,
                         is_double ? "float64" : "integer");
            release(a, n);
            return NULL;
        }
    }
    Py_ssize_t features = COUNT(a[0]), entries = COUNT(a[3]), items = COUNT(a[5]);
    const i64 *starts = PTR(a[2], i64), *prefix_item = PTR(a[3], i64), *keys = PTR(a[7], i64);
    int bad = COUNT(a[1]) != features || COUNT(a[2]) != features + 1 || COUNT(a[4]) != entries ||
              COUNT(a[6]) != items || first_item < 0 || !is_sorted_u64(PTR(a[0], u64), features, 1) ||
              !is_sorted_u64((const u64 *)keys, COUNT(a[7]), 0);
    if (!bad) bad = check_offsets("add_target", "starts", starts, features + 1, entries) < 0;
    for (Py_ssize_t e = 0; e < entries && !bad; e++) {
        bad = prefix_item[e] < first_item || prefix_item[e] >= first_item + items;
    }
    for (Py_ssize_t k = 0; k < COUNT(a[7]) && !bad; k++) {
        bad = keys[k] < 0 || keys[k] >= (i64)items * (i64)(features > 0 ? features : 1);
    }
    if (bad) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "add_target: inconsistent arrays");
        release(a, n);
        return NULL;
    }
    RewordTarget *targets = realloc(s->targets, sizeof(RewordTarget) * (size_t)(s->target_count + 1));
    if (targets == NULL) {
        release(a, n);
        return PyErr_NoMemory();
    }
    s->targets = targets;
    RewordTarget *t = &targets[s->target_count++];
    memset(t, 0, sizeof *t);
    t->first_item = first_item;
    t->items = items;
    t->floor = floor;
    t->bar = bar;
    t->unknown_weight = unknown;
    t->record_share = share;
    t->kind = (int)kind;
    t->distinct = PTR(a[0], u64);
    t->features = features;
    t->weight = PTR(a[1], double);
    t->starts = starts;
    t->prefix_item = prefix_item;
    t->prefix_weight = PTR(a[4], double);
    t->prefix_entries = entries;
    t->rest = PTR(a[5], double);
    t->item_weight = PTR(a[6], double);
    t->keys = keys;
    t->key_count = COUNT(a[7]);
    keep(a, n, t->held);
    if (target_tables(t) < 0) return PyErr_NoMemory(); /* freed with the pass (target_count counts it) */
    Py_RETURN_NONE;
}

/* ---- one unit ---------------------------------------------------------------------------- */

static inline u64 finish_word(u64 raw, i64 length) { return fmix64(raw ^ ((u64)length * LEN_MIX)); }

static inline u64 power_of(i64 k) {
    u64 p = 1, b = CHAR_BASE;
    for (; k > 0; k >>= 1) {
        if (k & 1) p *= b;
        b *= b;
    }
    return p;
}

static void sort_u64(u64 *v, Py_ssize_t n) { /* insertion sort: chunks hold 40 */
    for (Py_ssize_t i = 1; i < n; i++) {
        u64 x = v[i];
        Py_ssize_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The distinct values of two sorted runs, merged. */
static Py_ssize_t merge_distinct(const u64 *a, Py_ssize_t na, const u64 *b, Py_ssize_t nb, u64 *out) {
    Py_ssize_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        u64 x = j >= nb || (i < na && a[i] <= b[j]) ? a[i++] : b[j++];
        if (k == 0 || out[k - 1] != x) out[k++] = x;
    }
    return k;
}

typedef struct {
    u64 *masked, *grams, *content, *chunks, *window;
    i64 *rows, *number_of;
    u8 *known;
    double *weight;
    Py_ssize_t capacity;
    /* per target item scratch */
    double **acc, **best;
    double **present; /* per feature of the target: its weight while a window holding it is scored, else 0 */
    u8 **mark, **kept;
    i64 **touched, **found;
    Py_ssize_t *touched_n, *found_n;
} Scratch;

static int scratch_reserve(Scratch *x, Py_ssize_t n) {
    if (n <= x->capacity) return 0;
    Py_ssize_t capacity = x->capacity ? x->capacity : 1024;
    while (capacity < n) capacity *= 2;
#define SGROW(field, type) do { type *p_ = realloc(x->field, sizeof(type) * (size_t)capacity); if (!p_) return -1; x->field = p_; } while (0)
    SGROW(masked, u64); SGROW(grams, u64); SGROW(content, u64); SGROW(chunks, u64); SGROW(window, u64);
    SGROW(rows, i64); SGROW(number_of, i64); SGROW(known, u8); SGROW(weight, double);
#undef SGROW
    x->capacity = capacity;
    return 0;
}

enum { RUN_OK = 0, RUN_MEMORY = 1, RUN_MISSING = 2, RUN_CORRUPT = 3, RUN_BAD_ROW = 4 };

/* The masked 5-grams of one unit: hits (unit, position, posting) for every posting. */
static int unit_grams(const RewordPass *s, Scratch *x, Py_ssize_t n, i64 unit, Out *hits) {
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        i64 r = x->rows[i];
        if (s->number[r] && m > 0 && i > 0 && s->number[x->rows[i - 1]]) continue;
        x->masked[m++] = s->masked[r];
    }
    if (m < GRAM_N) return RUN_OK;
    const u64 p1 = WORD_BASE, p2 = p1 * WORD_BASE, p3 = p2 * WORD_BASE, p4 = p3 * WORD_BASE;
    Py_ssize_t g = m - GRAM_N + 1;
    for (Py_ssize_t j = 0; j < g; j++) {
        const u64 *w = x->masked + j;
        x->grams[j] = fmix64(w[0] + w[1] * p1 + w[2] * p2 + w[3] * p3 + w[4] * p4);
    }
    if (s->keyed) siphash_batch(s->k0, s->k1, x->grams, x->grams, g);
    for (Py_ssize_t j = 0; j < g; j++) {
        u64 h = x->grams[j], want = bloom_mask(h);
        if ((s->gram_bits[bloom_word(h, s->gram_shift)] & want) != want) continue;
        i64 posting = first_posting(s->gram_count, s->gram_hashes, s->gram_slots, s->gram_mask, h);
        for (; posting >= 0; posting = next_posting(s->gram_chain, posting, (i64)s->gram_count)) {
            i64 row[3] = {unit, (i64)j, posting};
            if (out_push(hits, row, sizeof row) < 0) return RUN_MEMORY;
        }
        if (posting != EMPTY) return RUN_CORRUPT;
    }
    return RUN_OK;
}

/* The word ``#A`` + mark + second, from ``#A``'s raw polynomial and length and the second's. */
static inline u64 joined(u64 first_raw, i64 first_len, char mark, u64 second_raw, i64 second_len) {
    u64 raw = first_raw + power_of(first_len) * ((u64)(unsigned char)mark + CHAR_BASE * second_raw);
    return finish_word(raw, first_len + 1 + second_len);
}

/* The content features of one unit, unkeyed then keyed (reword.vocab.content_stream). */
static Py_ssize_t unit_content(const RewordPass *s, Scratch *x, const i64 *rows, Py_ssize_t n) {
    Py_ssize_t m = 0;
    int last = 0; /* the last number's value is waiting for a stem */
    u64 last_raw = 0;
    i64 last_len = 0;
    int previous = 0; /* the last number with a value (number pairs) */
    u64 previous_raw = 0;
    i64 previous_len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        i64 r = rows[i];
        if (s->number[r]) {
            last = s->value_len[r] > 0;
            last_raw = s->value_raw[r];
            last_len = s->value_len[r];
            if (last) {
                x->content[m++] = finish_word(last_raw, last_len);
                if (s->number_pairs && previous) {
                    x->content[m++] = joined(previous_raw, previous_len, '>', last_raw, last_len);
                }
                previous = 1;
                previous_raw = last_raw;
                previous_len = last_len;
            }
            continue;
        }
        for (i64 k = s->inside_first[r]; k < s->inside_first[r + 1]; k++) x->content[m++] = s->inside[k];
        i64 stem_len = s->stem_len[r];
        if (stem_len == 0) continue;
        x->content[m++] = finish_word(s->stem_raw[r], stem_len);
        if (last) x->content[m++] = joined(last_raw, last_len, '~', s->stem_raw[r], stem_len);
        last = 0;
    }
    if (s->keyed && m > 0) siphash_batch(s->k0, s->k1, x->content, x->content, m);
    return m;
}

/* Score one window (distinct sorted features ``w[0..d)``) against target ``t``; each pair
 * reaching the floor updates the unit's best score of its item. As reword.matching's
 * _through_prefixes: the same sums in the same order. */
static void score_window(const RewordTarget *t, Scratch *x, Py_ssize_t ti, const u64 *w, Py_ssize_t d) {
    double own = 0, known = 0; /* known: the weight of the features some item has */
    for (Py_ssize_t j = 0; j < d; j++) {
        i64 f = feature_of(t, w[j]);
        x->known[j] = f >= 0;
        x->number_of[j] = f;
        x->weight[j] = f >= 0 ? t->weight[f] : t->unknown_weight;
        own += x->weight[j];
        if (f >= 0) known += x->weight[j];
    }
    /* A pair shares c <= known and c <= I, and c / (I + share (own - c)) is largest at
     * I = c = known: a window whose own features mostly no item has reaches no item's bar
     * (filters only: every score kept is computed exactly below). */
    if (!(known >= t->bar * (known + t->record_share * (own - known)))) return;
    double *acc = x->acc[ti], *present = x->present[ti];
    u8 *mark = x->mark[ti];
    i64 *touched = x->touched[ti];
    Py_ssize_t touched_n = 0;
    for (Py_ssize_t j = 0; j < d; j++) {
        if (!x->known[j]) continue;
        i64 f = x->number_of[j];
        present[f] = x->weight[j];
        for (i64 e = t->starts[f]; e < t->starts[f + 1]; e++) {
            i64 local = t->prefix_item[e] - t->first_item;
            if (!mark[local]) {
                mark[local] = 1;
                acc[local] = 0;
                touched[touched_n++] = local;
            }
            acc[local] += t->prefix_weight[e];
        }
    }
    double *best = x->best[ti];
    u8 *kept = x->kept[ti];
    for (Py_ssize_t k = 0; k < touched_n; k++) {
        i64 local = touched[k];
        mark[local] = 0;
        double whole = t->item_weight[local];
        double bound = acc[local] + t->rest[local];
        if (whole < bound) bound = whole;
        if (known < bound) bound = known;
        /* the bound's score reaching the bar, multiplied out (a filter: the score below is exact) */
        if (!(bound >= t->bar * (whole + t->record_share * (own - bound)))) continue;
        /* c: the window's features the item has, summed in hash order (feature numbers follow
         * hash order, and so do the item's keys); a feature the window lacks adds 0, which
         * leaves the sum as it is */
        double shared = 0;
        for (i64 k = t->item_first[local], k_end = t->item_first[local + 1]; k < k_end; k++) {
            shared += present[t->item_feature[k]];
        }
        double score = shared / (whole + t->record_share * (own - shared));
        if (!(score >= t->floor)) continue;
        if (!kept[local]) {
            kept[local] = 1;
            best[local] = score;
            x->found[ti][x->found_n[ti]++] = local;
        } else if (score > best[local]) {
            best[local] = score;
        }
    }
    for (Py_ssize_t j = 0; j < d; j++) {
        if (x->known[j]) present[x->number_of[j]] = 0;
    }
}

/* Score the ``m`` content features in x->content, window by window, against the targets of
 * ``kind``; each pair's best score is kept in the scratch (``unit_pairs`` writes them out). */
static void content_scores(const RewordPass *s, Scratch *x, Py_ssize_t m, int kind) {
    if (m == 0) return;
    for (Py_ssize_t c = 0; c * REWORD_STEP < m; c++) { /* each 40-feature chunk sorted once */
        Py_ssize_t lo = c * REWORD_STEP, hi = lo + REWORD_STEP < m ? lo + REWORD_STEP : m;
        memcpy(x->chunks + lo, x->content + lo, sizeof(u64) * (size_t)(hi - lo));
        sort_u64(x->chunks + lo, hi - lo);
    }
    Py_ssize_t windows = m <= REWORD_WINDOW ? 1 : (m - REWORD_WINDOW + REWORD_STEP - 1) / REWORD_STEP + 1;
    for (Py_ssize_t k = 0; k < windows; k++) { /* window k: chunks k and k + 1 */
        Py_ssize_t a0 = k * REWORD_STEP, a1 = a0 + REWORD_STEP < m ? a0 + REWORD_STEP : m;
        Py_ssize_t b1 = a1 + REWORD_STEP < m ? a1 + REWORD_STEP : m;
        Py_ssize_t d = merge_distinct(x->chunks + a0, a1 - a0, x->chunks + a1, b1 - a1, x->window);
        for (Py_ssize_t ti = 0; ti < s->target_count; ti++) {
            if (s->targets[ti].kind == kind) score_window(&s->targets[ti], x, ti, x->window, d);
        }
    }
}

/* A unit's best score with each item: over its windows, and when ``breaks`` marks words that
 * begin a new line of the unit (not its first), over the windows of each line and of the unit
 * without its first line too, each scored as a unit of its own (a record holding a question
 * and its choices: the stem alone, the choices alone). */
static int unit_scores(const RewordPass *s, Scratch *x, Py_ssize_t n, i64 unit, Out *pairs,
                       const u8 *breaks, int kind) {
    content_scores(s, x, unit_content(s, x, x->rows, n), kind);
    Py_ssize_t lines = 1;
    for (Py_ssize_t i = 1; breaks != NULL && i < n; i++) lines += breaks[i] != 0;
    for (Py_ssize_t a = 0; lines > 1 && a < n;) {
        Py_ssize_t b = a + 1;
        while (b < n && !breaks[b]) b++;
        content_scores(s, x, unit_content(s, x, x->rows + a, b - a), kind);
        /* the unit without its first line: a question's choices without its stem (with two
         * lines, that is the second line, scored next) */
        if (a == 0 && lines > 2) content_scores(s, x, unit_content(s, x, x->rows + b, n - b), kind);
        a = b;
    }
    for (Py_ssize_t ti = 0; ti < s->target_count; ti++) {
        const RewordTarget *t = &s->targets[ti];
        for (Py_ssize_t k = 0; k < x->found_n[ti]; k++) {
            i64 local = x->found[ti][k];
            x->kept[ti][local] = 0;
            struct { i64 unit, item; double score; } row = {unit, local + t->first_item, x->best[ti][local]};
            if (out_push(pairs, &row, sizeof row) < 0) return RUN_MEMORY;
        }
        x->found_n[ti] = 0;
    }
    return RUN_OK;
}

static void scratch_free(Scratch *x, Py_ssize_t targets) {
    free(x->masked); free(x->grams); free(x->content); free(x->chunks); free(x->window);
    free(x->rows); free(x->number_of); free(x->known); free(x->weight);
    for (Py_ssize_t t = 0; t < targets; t++) {
        if (x->acc) free(x->acc[t]);
        if (x->best) free(x->best[t]);
        if (x->present) free(x->present[t]);
        if (x->mark) free(x->mark[t]);
        if (x->kept) free(x->kept[t]);
        if (x->touched) free(x->touched[t]);
        if (x->found) free(x->found[t]);
    }
    free(x->acc); free(x->best); free(x->present); free(x->mark); free(x->kept); free(x->touched); free(x->found);
    free(x->touched_n); free(x->found_n);
}

static int scratch_targets(Scratch *x, const RewordPass *s) {
    Py_ssize_t n = s->target_count;
    x->acc = calloc((size_t)n + 1, sizeof(double *));
    x->best = calloc((size_t)n + 1, sizeof(double *));
    x->present = calloc((size_t)n + 1, sizeof(double *));
    x->mark = calloc((size_t)n + 1, sizeof(u8 *));
    x->kept = calloc((size_t)n + 1, sizeof(u8 *));
    x->touched = calloc((size_t)n + 1, sizeof(i64 *));
    x->found = calloc((size_t)n + 1, sizeof(i64 *));
    x->touched_n = calloc((size_t)n + 1, sizeof(Py_ssize_t));
    x->found_n = calloc((size_t)n + 1, sizeof(Py_ssize_t));
    if (!x->acc || !x->best || !x->present || !x->mark || !x->kept || !x->touched || !x->found || !x->touched_n || !x->found_n) {
        return -1;
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        size_t items = (size_t)s->targets[t].items + 1;
        x->acc[t] = calloc(items, sizeof(double));
        x->best[t] = calloc(items, sizeof(double));
        x->present[t] = calloc((size_t)s->targets[t].features + 1, sizeof(double));
        x->mark[t] = calloc(items, 1);
        x->kept[t] = calloc(items, 1);
        x->touched[t] = calloc(items, sizeof(i64));
        x->found[t] = calloc(items, sizeof(i64));
        if (!x->acc[t] || !x->best[t] || !x->present[t] || !x->mark[t] || !x->kept[t] || !x->touched[t] || !x->found[t]) return -1;
    }
    return 0;
}

/* run(word_hashes, unit_first, numbers, reworded[, breaks, kind]) -> (gram_hits, pairs): ``gram_hits`` packs
 * (unit, position, posting) int64 triples of the masked 5-grams found (numbers rule);
 * ``pairs`` packs (unit, item, score) as (int64, int64, float64) of every (unit, item) whose
 * best window reaches its target's floor (reworded rule). Unit u's words are
 * word_hashes[unit_first[u]:unit_first[u + 1]]; every word must have a row (see missing).
 * ``breaks`` (None, or a uint8 per word): the words that begin a line (see unit_scores);
 * ``kind``: the targets scored (add_target's kind, default 0). */
static PyObject *reword_run(RewordPass *s, PyObject *const *objs, Py_ssize_t nargs) {
    Arg a[4] = {{"word_hashes", 0, 8}, {"unit_first", 0, 8}};
    if (nargs < 4 || nargs > 7) {
        PyErr_SetString(PyExc_TypeError, "run(word_hashes, unit_first, numbers, reworded[, breaks, kind, rows])");
        return NULL;
    }
    int numbers = PyObject_IsTrue(objs[2]), reworded = PyObject_IsTrue(objs[3]);
    int kind = nargs >= 6 ? (int)PyLong_AsLong(objs[5]) : 0;
    if (numbers < 0 || reworded < 0 || PyErr_Occurred()) return NULL;
    int with_breaks = nargs >= 5 && objs[4] != Py_None, with_rows = nargs == 7 && objs[6] != Py_None;
    /* the buffers given, in order: an absent optional one takes no place */
    PyObject *taken[4] = {objs[0], objs[1]};
    Py_ssize_t held = 2, at_breaks = -1, at_rows = -1;
    if (with_breaks) {
        at_breaks = held;
        a[held] = (Arg){"breaks", 0, 1};
        taken[held++] = objs[4];
    }
    if (with_rows) {
        at_rows = held;
        a[held] = (Arg){"rows", 0, 4};
        taken[held++] = objs[6];
    }
    if (take("run", taken, held, a, held) < 0) return NULL;
    const u64 *hashes = PTR(a[0], u64);
    const i64 *first = PTR(a[1], i64);
    const u8 *breaks = with_breaks ? PTR(a[at_breaks], u8) : NULL;
    const int32_t *known_rows = with_rows ? PTR(a[at_rows], int32_t) : NULL;
    if (with_rows && COUNT(a[at_rows]) != COUNT(a[0])) {
        PyErr_SetString(PyExc_ValueError, "run: rows must hold one item per word hash");
        release(a, held);
        return NULL;
    }
    Py_ssize_t units = COUNT(a[1]) - 1;
    if (units < 0 || check_offsets("run", "unit_first", first, units + 1, COUNT(a[0])) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "run: unit_first must hold units + 1 items");
        release(a, held);
        return NULL;
    }
    if (with_breaks && COUNT(a[at_breaks]) != COUNT(a[0])) {
        PyErr_SetString(PyExc_ValueError, "run: breaks must hold one item per word hash");
        release(a, held);
        return NULL;
    }
    if (numbers && !s->has_grams) {
        PyErr_SetString(PyExc_ValueError, "run: numbers asked for before set_grams");
        release(a, held);
        return NULL;
    }
    Out hits = {0}, pairs = {0};
    Scratch x;
    memset(&x, 0, sizeof x);
    int status = RUN_OK;
    s->running++;
    Py_BEGIN_ALLOW_THREADS
    if (reworded && scratch_targets(&x, s) < 0) status = RUN_MEMORY;
    for (Py_ssize_t u = 0; u < units && status == RUN_OK; u++) {
        Py_ssize_t n = first[u + 1] - first[u];
        if (scratch_reserve(&x, n + 1) < 0) {
            status = RUN_MEMORY;
            break;
        }
        /* a unit's content features: up to 3 per word, and the numbers inside each word */
        Py_ssize_t most = 3 * n + 1;
        for (Py_ssize_t i = 0; i < n && status == RUN_OK; i++) {
            /* a row the prefilter found is kept (rows are never moved); -1: looked up now */
            i64 r = known_rows != NULL ? known_rows[first[u] + i] : -1;
            if (r >= s->rows || r < -1) status = RUN_BAD_ROW;
            else if (r < 0) r = vocab_row(s, hashes[first[u] + i]);
            x.rows[i] = r;
            if (status == RUN_OK && r < 0) status = RUN_MISSING;
            else most += s->inside_first[r + 1] - s->inside_first[r];
        }
        if (status != RUN_OK || scratch_reserve(&x, most) < 0) {
            if (status == RUN_OK) status = RUN_MEMORY;
            break;
        }
        if (numbers) status = unit_grams(s, &x, n, (i64)u, &hits);
        if (reworded && status == RUN_OK) {
            status = unit_scores(s, &x, n, (i64)u, &pairs, breaks ? breaks + first[u] : NULL, kind);
        }
    }
    scratch_free(&x, s->target_count);
    Py_END_ALLOW_THREADS
    s->running--;
    release(a, held);
    if (status != RUN_OK) {
        free(hits.data);
        free(pairs.data);
        if (status == RUN_MEMORY) return PyErr_NoMemory();
        if (status == RUN_CORRUPT) return corrupt_chain("run");
        if (status == RUN_BAD_ROW) {
            PyErr_SetString(PyExc_ValueError, "run: a row is out of range (rows: -1 or a row of this pass)");
            return NULL;
        }
        PyErr_SetString(PyExc_KeyError, "run: a word hash has no row (call missing and add_words first)");
        return NULL;
    }
    PyObject *h = out_bytes(&hits), *p = out_bytes(&pairs);
    if (h == NULL || p == NULL) {
        Py_XDECREF(h);
        Py_XDECREF(p);
        return NULL;
    }
    return Py_BuildValue("(NN)", h, p);
}

static PyObject *reword_words(RewordPass *s, void *closure) { return PyLong_FromSsize_t(s->rows); }

/* ---- the type ------------------------------------------------------------------------------ */

static int reword_init(RewordPass *s, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"key", "number_pairs", NULL};
    PyObject *key = NULL;
    int number_pairs = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p", names, &key, &number_pairs)) return -1;
    s->number_pairs = number_pairs;
    Arg a[] = {{"key", 0, 8}};
    PyObject *objs[] = {key};
    if (take("RewordPass", objs, 1, a, 1) < 0) return -1;
    Py_ssize_t count = COUNT(a[0]);
    if (count != 0 && count != 2) {
        PyErr_SetString(PyExc_ValueError, "RewordPass: key must hold no items (unkeyed) or 2 (k0, k1)");
        release(a, 1);
        return -1;
    }
    s->keyed = count == 2;
    if (s->keyed) {
        s->k0 = PTR(a[0], u64)[0];
        s->k1 = PTR(a[0], u64)[1];
    }
    release(a, 1);
    return 0;
}

static void reword_dealloc(RewordPass *s) {
    free(s->table);
    free(s->word); free(s->masked); free(s->value_raw); free(s->stem_raw);
    free(s->value_len); free(s->stem_len); free(s->inside_first); free(s->number); free(s->inside);
    if (s->has_grams) release_held(s->gram_held, 4);
    for (Py_ssize_t t = 0; t < s->target_count; t++) {
        release_held(s->targets[t].held, REWORD_TARGET_BUFFERS);
        free(s->targets[t].item_first);
        free(s->targets[t].item_feature);
        free(s->targets[t].map_key);
        free(s->targets[t].map_f);
    }
    free(s->targets);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMethodDef reword_methods[] = {
    {"add_words", (PyCFunction)(void (*)(void))reword_add_words, METH_FASTCALL, "Rows for new words."},
    {"missing", (PyCFunction)(void (*)(void))reword_missing, METH_FASTCALL, "Distinct word hashes without a row."},
    {"set_grams", (PyCFunction)(void (*)(void))reword_set_grams, METH_FASTCALL, "The masked 5-grams' table."},
    {"add_target", (PyCFunction)(void (*)(void))reword_add_target, METH_FASTCALL, "One view's content features."},
    {"run", (PyCFunction)(void (*)(void))reword_run, METH_FASTCALL, "Masked 5-gram hits and reworded pairs of units."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef reword_getset[] = {
    {"words", (getter)reword_words, NULL, "Distinct words with a row.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RewordPassType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "contam_guard._native.RewordPass",
    .tp_basicsize = sizeof(RewordPass),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The rewording rules' compiled pass over word hashes (see csrc/reword.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reword_init,
    .tp_dealloc = (destructor)reword_dealloc,
    .tp_methods = reword_methods,
    .tp_getset = reword_getset,
};

static int add_reword_type(PyObject *module) {
    if (PyType_Ready(&RewordPassType) < 0) return -1;
    Py_INCREF(&RewordPassType);
    if (PyModule_AddObject(module, "RewordPass", (PyObject *)&RewordPassType) < 0) {
        Py_DECREF(&RewordPassType);
        return -1;
    }
    return 0;
}
