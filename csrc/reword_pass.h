/*
 * What the prefilter (native.c) and the rewording pass (reword.c) share: the ``RewordPass``
 * type's layout, whose vocabulary the prefilter consults to spell the words it has not met
 * (see WordOut in native.c), and growable output arrays.
 */

#define REWORD_WINDOW 80 /* content features per window (reword.matching.WINDOW_WORDS) */
#define REWORD_STEP (REWORD_WINDOW / 2)
#define REWORD_TARGET_BUFFERS 8 /* add_target's buffers, kept for as long as the pass lives */

typedef struct {
    i64 first_item, items;
    double floor, bar; /* keep a pair scoring floor; look at one whose bound reaches bar */
    double unknown_weight, record_share;
    int kind; /* which units score against it: prose strings and lines (0), docstrings (1) */
    const u64 *distinct; Py_ssize_t features; /* sorted */
    const double *weight;
    const i64 *starts;
    const i64 *prefix_item; const double *prefix_weight; Py_ssize_t prefix_entries;
    const double *rest, *item_weight;
    const i64 *keys; Py_ssize_t key_count;
    i64 *item_first;          /* item i's keys are keys[item_first[i]:item_first[i + 1]] */
    i64 *item_feature;        /* the feature number of each of those keys (a key met twice once) */
    u64 *map_key; i64 *map_f; /* open addressing: feature hash -> feature number + 1 */
    u64 map_mask;
    Py_buffer held[REWORD_TARGET_BUFFERS];
} RewordTarget;

typedef struct {
    PyObject_HEAD
    /* the vocabulary: an open-addressing table of (word hash, row + 1) pairs (row 0: empty),
     * the two side by side so that a probe reads one cache line */
    u64 *table; Py_ssize_t slots;
    Py_ssize_t rows, row_capacity;
    u64 *word, *masked, *value_raw, *stem_raw;
    i64 *value_len, *stem_len, *inside_first;
    u8 *number;
    u64 *inside; Py_ssize_t inside_count, inside_capacity;
    /* the key of a keyed manifest */
    int keyed; u64 k0, k1;
    int number_pairs; /* content spec words-v2: each two consecutive numbers with a value */
    /* the masked 5-grams (numbers rule) */
    int has_grams; Py_buffer gram_held[4];
    u64 gram_count, gram_mask; const u64 *gram_hashes, *gram_slots; const i64 *gram_chain; const u64 *gram_bits; int gram_shift;
    /* the content features of each (set, view) (reworded rule) */
    RewordTarget *targets; Py_ssize_t target_count;
    int running; /* runs in progress (changed with the GIL held) */
} RewordPass;

/* ---- growable output arrays (plain malloc: filled without the GIL) --------------------- */

typedef struct {
    char *data;
    Py_ssize_t used, capacity; /* in bytes */
} Out;

static int out_push(Out *o, const void *item, Py_ssize_t size) {
    if (o->used + size > o->capacity) {
        Py_ssize_t capacity = o->capacity ? o->capacity : 4096;
        while (capacity < o->used + size) capacity *= 2;
        char *data = realloc(o->data, (size_t)capacity);
        if (data == NULL) return -1;
        o->data = data;
        o->capacity = capacity;
    }
    memcpy(o->data + o->used, item, (size_t)size);
    o->used += size;
    return 0;
}

static PyObject *out_bytes(Out *o) {
    PyObject *bytes = PyBytes_FromStringAndSize(o->data ? o->data : "", o->used);
    free(o->data);
    o->data = NULL;
    return bytes;
}

/* ---- the vocabulary ------------------------------------------------------------------------ */

static i64 vocab_row(const RewordPass *s, u64 key) {
    if (s->slots == 0) return -1;
    u64 mask = (u64)s->slots - 1, slot = key & mask;
    for (Py_ssize_t probes = 0; probes < s->slots; probes++) {
        const u64 *entry = s->table + 2 * slot;
        if (entry[1] == 0) return -1;
        if (entry[0] == key) return (i64)entry[1] - 1;
        slot = (slot + 1) & mask;
    }
    return -1;
}

static PyTypeObject RewordPassType; /* defined in reword.c */
