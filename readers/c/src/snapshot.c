/* One state to answer from: the cache's pins in force and the fallback pins, grouped by folded
 * name behind an open-addressing hash table, so a question costs one lookup per name. Shared by
 * concurrent questions and freed when the last one lets go of it. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* FNV-1a, 64 bits: names are short, and the table only needs them spread. */
uint64_t pk_hash(const char *bytes, size_t length) {
    uint64_t hash = 0xcbf29ce484222325u;
    for (size_t index = 0; index < length; index++) {
        hash ^= (unsigned char)bytes[index];
        hash *= 0x100000001b3u;
    }
    return hash;
}

static pk_bucket *bucket_for(pk_bucket *buckets, size_t mask, const char *key, size_t length, uint64_t hash) {
    for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
        pk_bucket *bucket = &buckets[slot];
        if (bucket->key == NULL) return bucket;
        if (bucket->hash == hash && pk_same_folded(bucket->key, bucket->key_length, key, length)) return bucket;
    }
}

/* Counts the pins of each name, then gives each name its run of the grouped array. */
static bool group(pk_snapshot *snapshot, const pk_pin *const *all, size_t total) {
    size_t size = 16;
    while (size < total * 2) size *= 2;
    snapshot->buckets = calloc(size, sizeof *snapshot->buckets);
    snapshot->pins = calloc(total ? total : 1, sizeof *snapshot->pins);
    if (snapshot->buckets == NULL || snapshot->pins == NULL) return false;
    snapshot->bucket_mask = size - 1;
    for (size_t index = 0; index < total; index++) {
        uint64_t hash = pk_hash(all[index]->key, all[index]->key_length);
        pk_bucket *bucket = bucket_for(snapshot->buckets, snapshot->bucket_mask, all[index]->key, all[index]->key_length, hash);
        if (bucket->key == NULL) *bucket = (pk_bucket){all[index]->key, all[index]->key_length, hash, 0, 0};
        bucket->count++;
    }
    size_t next = 0;
    for (size_t slot = 0; slot < size; slot++) {
        if (snapshot->buckets[slot].key == NULL) continue;
        snapshot->buckets[slot].first = next;
        next += snapshot->buckets[slot].count;
        snapshot->buckets[slot].count = 0;
    }
    for (size_t index = 0; index < total; index++) {
        uint64_t hash = pk_hash(all[index]->key, all[index]->key_length);
        pk_bucket *bucket = bucket_for(snapshot->buckets, snapshot->bucket_mask, all[index]->key, all[index]->key_length, hash);
        snapshot->pins[bucket->first + bucket->count++] = *all[index];
    }
    snapshot->pin_count = total;
    return true;
}

pk_snapshot *pk_snapshot_new(pk_list *cache, const pk_list *fallback) {
    pk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    size_t cached = cache ? cache->pin_count : 0, total = cached + fallback->pin_count;
    const pk_pin **all = calloc(total ? total : 1, sizeof *all);
    if (snapshot == NULL || all == NULL) {
        free(snapshot), free(all);
        if (cache) pk_list_free(cache);
        return NULL;
    }
    atomic_init(&snapshot->references, 1);
    if (cache != NULL) {
        snapshot->cache = *cache, snapshot->has_cache = true;
        *cache = (pk_list){0};
    }
    for (size_t index = 0; index < cached; index++) all[index] = &snapshot->cache.pins[index];
    for (size_t index = 0; index < fallback->pin_count; index++) all[cached + index] = &fallback->pins[index];
    bool grouped = group(snapshot, all, total);
    free(all);
    if (!grouped) {
        pk_snapshot_release(snapshot);
        return NULL;
    }
    return snapshot;
}

void pk_snapshot_retain(pk_snapshot *snapshot) { atomic_fetch_add_explicit(&snapshot->references, 1, memory_order_relaxed); }

void pk_snapshot_release(pk_snapshot *snapshot) {
    if (snapshot == NULL || atomic_fetch_sub_explicit(&snapshot->references, 1, memory_order_acq_rel) != 1) return;
    pk_list_free(&snapshot->cache);
    free(snapshot->pins);
    free(snapshot->buckets);
    free(snapshot);
}

const pk_pin *pk_snapshot_pins(const pk_snapshot *snapshot, const char *key, size_t key_length, size_t *count) {
    uint64_t hash = pk_hash(key, key_length);
    for (size_t slot = hash & snapshot->bucket_mask;; slot = (slot + 1) & snapshot->bucket_mask) {
        const pk_bucket *bucket = &snapshot->buckets[slot];
        if (bucket->key == NULL) break;
        if (bucket->hash == hash && pk_same_folded(bucket->key, bucket->key_length, key, key_length)) {
            *count = bucket->count;
            return &snapshot->pins[bucket->first];
        }
    }
    *count = 0;
    return NULL;
}
