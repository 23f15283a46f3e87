/* H in its one form (docs/protocol.md, "H in one spelling"): the host a client hands over becomes
 * the one text every reader looks up, or is refused. A TLS stack accepts several spellings of one
 * address or name; looking up the spelling instead of what was verified could miss the host's pins
 * and its domainsConfig entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Exactly four decimal parts, each 0-255 without a leading zero; writes the four bytes. */
static bool ipv4_parts(const char *text, size_t length, unsigned char address[4]) {
    size_t part = 0, index = 0;
    while (part < 4) {
        size_t start = index;
        unsigned value = 0;
        while (index < length && is_digit(text[index]) && index - start < 4) value = value * 10 + (unsigned)(text[index++] - '0');
        size_t digits = index - start;
        if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && text[start] == '0')) return false;
        address[part++] = (unsigned char)value;
        if (part < 4) {
            if (index >= length || text[index] != '.') return false;
            index++;
        }
    }
    return index == length;
}

static void append_ipv4(pk_text *out, const unsigned char address[4]) {
    char text[16];
    int written = snprintf(text, sizeof text, "%u.%u.%u.%u", address[0], address[1], address[2], address[3]);
    pk_text_append(out, text, (size_t)written);
}

/* Step 3: the last label (one trailing dot dropped) all digits or starting 0x, or only digits and
 * dots: the name means an IPv4 address to a resolver, so it is one, in its one form, or refused. */
static bool looks_like_ipv4(const char *text, size_t length) {
    bool only_digits_and_dots = true;
    for (size_t index = 0; index < length; index++)
        if (!is_digit(text[index]) && text[index] != '.') only_digits_and_dots = false;
    if (only_digits_and_dots) return true;
    size_t end = length;
    if (end > 0 && text[end - 1] == '.') end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '.') start--;
    if (end - start >= 2 && text[start] == '0' && (text[start + 1] == 'x' || text[start + 1] == 'X')) return true;
    if (end == start) return false;
    for (size_t index = start; index < end; index++)
        if (!is_digit(text[index])) return false;
    return true;
}

static int hex_digit(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* What inet_pton(AF_INET6) accepts: up to eight groups of 1-4 hex digits, at most one "::", maybe
 * ending in a dotted IPv4 address (step 3's form). */
static bool ipv6_words(const char *text, size_t length, uint16_t words[8]) {
    size_t count = 0, index = 0;
    long compressed_at = -1;
    if (length >= 2 && text[0] == ':' && text[1] == ':') {
        compressed_at = 0, index = 2;
    } else if (length > 0 && text[0] == ':') {
        return false;
    }
    while (index < length) {
        size_t start = index;
        unsigned value = 0;
        while (index < length && hex_digit(text[index]) >= 0 && index - start < 5)
            value = (value << 4) | (unsigned)hex_digit(text[index++]);
        if (index < length && text[index] == '.') {
            unsigned char address[4];
            if (count > 6 || !ipv4_parts(text + start, length - start, address)) return false;
            words[count++] = (uint16_t)(address[0] << 8 | address[1]);
            words[count++] = (uint16_t)(address[2] << 8 | address[3]);
            index = length;
            break;
        }
        if (index == start || index - start > 4 || count == 8) return false;
        words[count++] = (uint16_t)value;
        if (index == length) break;
        if (text[index] != ':') return false;
        index++;
        if (index < length && text[index] == ':') {
            if (compressed_at >= 0) return false;
            compressed_at = (long)count, index++;
        } else if (index == length) {
            return false; /* a trailing single colon */
        }
    }
    if (compressed_at < 0) return count == 8;
    if (count > 7) return false;
    size_t missing = 8 - count;
    memmove(words + compressed_at + missing, words + compressed_at, (count - (size_t)compressed_at) * sizeof *words);
    memset(words + compressed_at, 0, missing * sizeof *words);
    return true;
}

/* RFC 5952: lower-case hex without leading zeros, the first longest run of two or more zero words
 * as "::", and an address of ::ffff:0:0/96 as ::ffff:a.b.c.d. */
static void append_ipv6(pk_text *out, const uint16_t words[8]) {
    static const uint16_t mapped[6] = {0, 0, 0, 0, 0, 0xffff};
    if (memcmp(words, mapped, sizeof mapped) == 0) {
        unsigned char address[4] = {words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff};
        pk_text_append(out, "::ffff:", 7);
        append_ipv4(out, address);
        return;
    }
    int best_start = -1, best_length = 0;
    for (int index = 0; index < 8;) {
        int run = 0;
        while (index + run < 8 && words[index + run] == 0) run++;
        if (run >= 2 && run > best_length) best_start = index, best_length = run;
        index += run ? run : 1;
    }
    char group[8];
    for (int index = 0; index < 8; index++) {
        if (index == best_start) {
            pk_text_append(out, "::", 2);
            index += best_length - 1;
            continue;
        }
        if (index > 0 && index != best_start + best_length) pk_text_byte(out, ':');
        int written = snprintf(group, sizeof group, "%x", words[index]);
        pk_text_append(out, group, (size_t)written);
    }
}

bool pk_ip_one_form(const char *text, size_t length, pk_text *out, bool bracketed) {
    uint16_t words[8];
    if (bracketed || memchr(text, ':', length) != NULL) {
        if (memchr(text, '%', length) != NULL || !ipv6_words(text, length, words)) return false;
        append_ipv6(out, words);
        return true;
    }
    unsigned char address[4];
    if (!ipv4_parts(text, length, address)) return false;
    append_ipv4(out, address);
    return true;
}

/* RFC 3492's parameters for Punycode. */
enum { BASE = 36, T_MIN = 1, T_MAX = 26, SKEW = 38, DAMP = 700, INITIAL_BIAS = 72, INITIAL_N = 128 };

static uint32_t adapt(uint32_t delta, uint32_t points, bool first) {
    delta = first ? delta / DAMP : delta / 2;
    delta += delta / points;
    uint32_t k = 0;
    while (delta > ((BASE - T_MIN) * T_MAX) / 2) {
        delta /= BASE - T_MIN;
        k += BASE;
    }
    return k + (BASE - T_MIN + 1) * delta / (delta + SKEW);
}

static char digit_for(uint32_t digit) { return (char)(digit < 26 ? 'a' + digit : '0' + digit - 26); }

static void encode_delta(pk_text *out, uint32_t delta, uint32_t bias) {
    uint32_t q = delta;
    for (uint32_t k = BASE;; k += BASE) {
        uint32_t t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
        if (q < t) break;
        pk_text_byte(out, digit_for(t + (q - t) % (BASE - t)));
        q = (q - t) / (BASE - t);
    }
    pk_text_byte(out, digit_for(q));
}

/* RFC 3492 section 6.3: the basic code points, a delimiter, then the others as deltas. */
bool pk_punycode(const uint32_t *scalars, size_t count, pk_text *out) {
    size_t basic = 0;
    for (size_t index = 0; index < count; index++)
        if (scalars[index] < 0x80) pk_text_byte(out, (char)scalars[index]), basic++;
    if (basic > 0) pk_text_byte(out, '-');
    uint32_t n = INITIAL_N, delta = 0, bias = INITIAL_BIAS;
    for (size_t handled = basic; handled < count;) {
        uint32_t next = UINT32_MAX;
        for (size_t index = 0; index < count; index++)
            if (scalars[index] >= n && scalars[index] < next) next = scalars[index];
        if ((uint64_t)(next - n) * (handled + 1) + delta > UINT32_MAX) return false;
        delta += (next - n) * (uint32_t)(handled + 1);
        n = next;
        for (size_t index = 0; index < count; index++) {
            if (scalars[index] < n && ++delta == 0) return false;
            if (scalars[index] != n) continue;
            encode_delta(out, delta, bias);
            bias = adapt(delta, (uint32_t)handled + 1, handled == basic);
            delta = 0, handled++;
        }
        delta++, n++;
    }
    return true;
}

static uint32_t lower(uint32_t scalar) { return scalar >= 'A' && scalar <= 'Z' ? scalar | 0x20 : scalar; }

/* One label of a DNS name with its ASCII capitals lower-cased: as it is, or "xn--" and its
 * Punycode when it holds any other scalar (as written: no IDNA mapping, no normalisation). */
static bool append_label(pk_text *out, const char *label, size_t length) {
    bool ascii = true;
    for (size_t index = 0; index < length; index++)
        if ((unsigned char)label[index] >= 0x80) ascii = false;
    if (ascii) {
        size_t start = out->length;
        pk_text_append(out, label, length);
        for (size_t index = start; !out->failed && index < out->length; index++)
            out->bytes[index] = (char)lower((unsigned char)out->bytes[index]);
        return true;
    }
    uint32_t *scalars = malloc(length * sizeof *scalars);
    size_t count = 0;
    bool encoded = scalars != NULL;
    for (size_t index = 0; encoded && index < length;) {
        size_t size = pk_utf8_decode((const unsigned char *)label + index, length - index, &scalars[count]);
        if (size == 0) encoded = false;
        scalars[count] = lower(scalars[count]);
        count++, index += size;
    }
    if (encoded) {
        pk_text_append(out, "xn--", 4);
        encoded = pk_punycode(scalars, count, out);
    }
    free(scalars);
    return encoded;
}

static bool has_idna_dot(const char *text, size_t length) {
    static const char *const dots[] = {"\xe3\x80\x82", "\xef\xbc\x8e", "\xef\xbd\xa1"}; /* U+3002 U+FF0E U+FF61 */
    for (size_t index = 0; index + 3 <= length; index++) {
        if ((unsigned char)text[index] != 0xe3 && (unsigned char)text[index] != 0xef) continue;
        for (size_t dot = 0; dot < 3; dot++)
            if (memcmp(text + index, dots[dot], 3) == 0) return true;
    }
    return false;
}

/* Labels as written, ASCII capitals lower-cased on the way (no copy of the name). */
static bool dns_one_form(const char *text, size_t length, pk_text *out) {
    if (has_idna_dot(text, length)) return false;
    if (length > 0 && text[length - 1] == '.') length--;
    if (length == 0) return false;
    bool written = true;
    for (size_t start = 0; written && start <= length;) {
        const char *dot = memchr(text + start, '.', length - start);
        size_t end = dot ? (size_t)(dot - text) : length;
        if (end == start) written = false;
        if (written && start > 0) pk_text_byte(out, '.');
        if (written) written = append_label(out, text + start, end - start);
        start = end + 1;
    }
    return written;
}

bool pk_host_one_form(const char *spelling, size_t length, pk_text *out) {
    if (length == 0 || memchr(spelling, '\0', length) != NULL) return false;
    if (spelling[0] == '[') {
        if (length < 2 || spelling[length - 1] != ']') return false;
        return pk_ip_one_form(spelling + 1, length - 2, out, true);
    }
    if (memchr(spelling, ':', length) != NULL) return pk_ip_one_form(spelling, length, out, true);
    if (looks_like_ipv4(spelling, length)) return pk_ip_one_form(spelling, length, out, false);
    return dns_one_form(spelling, length, out);
}

PK_EXPORT char *pk_canonical_host(const char *spelling) {
    if (spelling == NULL) return NULL;
    pk_text out = {0};
    if (!pk_host_one_form(spelling, strlen(spelling), &out) || out.failed || out.bytes == NULL) {
        pk_text_free(&out);
        return NULL;
    }
    return out.bytes;
}

PK_EXPORT void pk_free(void *memory) { free(memory); }
