// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The stream's frames: hello, records, acks (see stream.h, docs/stream.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vigil/event_kinds.h>
#include "event_format.h"
#include "ring.h"
#include "stream.h"

/*
 * The schema this build writes and reads: type ids and their sizes, from
 * the catalogue (vigil/event_kinds.h), so senders announce every kind and
 * receivers can refuse a sender whose layout differs from theirs.
 */
#define SCHEMA_ENTRY(id, name, st, variable, check, format, tetragon) \
	{ id, (variable) ? VIGIL_STREAM_TYPE_VARIABLE : 0, sizeof(struct st) },
static const struct vigil_stream_type schema[] = { VIGIL_EVENT_KINDS(SCHEMA_ENTRY) };
#define NSCHEMA (sizeof(schema) / sizeof(*schema))

static const struct vigil_stream_type *schema_find(uint16_t type);

bool vigil_stream_type_known(uint16_t type)
{
	return schema_find(type) != NULL;
}

static const struct vigil_stream_type *schema_find(uint16_t type)
{
	for (size_t i = 0; i < NSCHEMA; i++)
		if (schema[i].type == type)
			return &schema[i];
	return NULL;
}

void vigil_stream_hello_build(struct vigil_buf *b, const char *node_name, const __u8 boot_id[16],
			      uint32_t ring_id, uint64_t ring_size, uint64_t start_offset,
			      int64_t realtime_offset_ns)
{
	size_t name_len = strnlen(node_name, VIGIL_STREAM_NAME_MAX);
	size_t len = sizeof(struct vigil_stream_hello) + sizeof(schema) + name_len;
	struct vigil_stream_hello h = {
		.version = VIGIL_STREAM_VERSION,
		.hello_len = (len + 7) & ~7UL,
		.schema_version = VIGIL_SCHEMA_VERSION,
		.ring_id = ring_id,
		.flags = VIGIL_STREAM_LE,
		.start_offset = start_offset,
		.ring_size = ring_size,
		.realtime_offset_ns = realtime_offset_ns,
		.agent_pid = getpid(),
		.agent_uid = getuid(),
		.agent_gid = getgid(),
		.node_name_len = name_len,
		.ntypes = NSCHEMA,
	};
	static const char zero[8];

	memcpy(h.magic, VIGIL_STREAM_MAGIC, sizeof(h.magic));
	memcpy(h.boot_id, boot_id, sizeof(h.boot_id));
	vbuf_put(b, &h, sizeof(h));
	vbuf_put(b, schema, sizeof(schema));
	vbuf_put(b, node_name, name_len);
	vbuf_put(b, zero, h.hello_len - len);
}

int vigil_stream_hello_parse(const void *p, size_t n, struct vigil_stream_peer *out,
			     const char **why)
{
	const struct vigil_stream_hello *h = p;
	const struct vigil_stream_type *t;
	size_t need;

	/* The magic is checked on the first bytes, so garbage is refused
	 * before the sender can make us wait for a full hello. */
	if (memcmp(p, VIGIL_STREAM_MAGIC, n < 8 ? n : 8))
		return *why = "bad magic", -EPROTO;
	if (n < sizeof(*h))
		return 0;
	if (h->version != VIGIL_STREAM_VERSION)
		return *why = "unknown stream version", -EPROTO;
	if (!(h->flags & VIGIL_STREAM_LE))
		return *why = "records not little-endian", -EPROTO;
	if (VIGIL_SCHEMA_MAJOR_OF(h->schema_version) != VIGIL_SCHEMA_MAJOR) {
		static __thread char text[96];

		snprintf(text, sizeof(text), "event schema %u.%u, another major version than "
			 "this build's %u.%u", VIGIL_SCHEMA_MAJOR_OF(h->schema_version),
			 VIGIL_SCHEMA_MINOR_OF(h->schema_version), VIGIL_SCHEMA_MAJOR,
			 VIGIL_SCHEMA_MINOR);
		return *why = text, -EPROTO;
	}
	if (h->ntypes > VIGIL_STREAM_TYPES_MAX || h->node_name_len > VIGIL_STREAM_NAME_MAX ||
	    !h->node_name_len)
		return *why = "hello counts out of range", -EPROTO;
	need = sizeof(*h) + (size_t)h->ntypes * sizeof(*t) + h->node_name_len;
	if (h->hello_len < need || h->hello_len > VIGIL_STREAM_HELLO_MAX || (h->hello_len & 7))
		return *why = "hello length disagrees with its content", -EPROTO;
	if ((h->ring_size & (h->ring_size - 1)) || h->ring_size < 4096 ||
	    h->ring_size > (1ull << 32))
		return *why = "ring size not a power of two in range", -EPROTO;
	if (n < h->hello_len)
		return 0;

	if (h->start_offset > VIGIL_STREAM_OFFSET_MAX)
		return *why = "start offset out of range", -EPROTO;

	memset(out, 0, sizeof(*out));
	t = (const void *)(h + 1);
	for (unsigned i = 0; i < h->ntypes; i++, t++) {
		const struct vigil_stream_type *mine;

		/* Type 0 is no event: a record's type is looked up in this
		 * table, so an entry for it would give meaning to garbage. */
		if (!t->type || t->type > VIGIL_EV_TYPE_MAX || out->type_size[t->type] ||
		    !t->size || t->size > VIGIL_EVENT_MAX_SIZE)
			return *why = "bad entry in the hello's type table", -EPROTO;
		mine = schema_find(t->type);
		if (mine && (mine->size != t->size || mine->flags != t->flags))
			return *why = "event size in the hello differs from the collector's schema",
			       -EPROTO;
		out->type_size[t->type] = t->size;
		out->type_variable[t->type] = !!(t->flags & VIGIL_STREAM_TYPE_VARIABLE);
	}
	memcpy(out->node_name, t, h->node_name_len);
	/* The name goes into logs and subjects as it is: text only. */
	if (!vigil_utf8_text(out->node_name, h->node_name_len))
		return *why = "node name not printable UTF-8", -EPROTO;
	memcpy(out->boot_id, h->boot_id, sizeof(out->boot_id));
	out->ring_id = h->ring_id;
	out->start_offset = h->start_offset;
	out->ring_size = h->ring_size;
	out->realtime_offset_ns = h->realtime_offset_ns;
	out->pid = h->agent_pid;
	out->uid = h->agent_uid;
	out->gid = h->agent_gid;
	if (out->start_offset & 7)
		return *why = "start offset not 8-aligned", -EPROTO;
	return h->hello_len;
}

bool vigil_utf8_text(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned c = *p, need, cp;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07;
		else
			return false;
		if ((size_t)(end - p) <= need)
			return false;
		for (unsigned i = 1; i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, past U+10FFFF, C1 controls */
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
			return false;
		p += need + 1;
	}
	return true;
}

int vigil_stream_rec_parse(const struct vigil_stream_peer *peer, const void *p, size_t n,
			   struct vigil_stream_rec *out, const char **why)
{
	const struct vigil_hdr *h;
	uint32_t raw, len, want;

	if (n < VIGIL_RB_HDR_SZ)
		return 0;
	memcpy(&raw, p, sizeof(raw));
	if (raw & VIGIL_RB_BUSY)
		return *why = "uncommitted (BUSY) record", -EPROTO;
	len = raw & ~VIGIL_RB_DISCARD;
	if (len > VIGIL_EVENT_MAX_SIZE)
		return *why = "record length past the limit", -EPROTO;
	out->span = vigil_ring_rec_span(len);
	out->len = len;
	out->event = NULL;
	if (n < out->span)
		return 0;
	if (raw & VIGIL_RB_DISCARD)
		return 1;
	h = (const void *)((const char *)p + VIGIL_RB_HDR_SZ);
	if (len < sizeof(*h))
		return *why = "record shorter than the event header", -EPROTO;
	/* The type is range-checked before it indexes anything. */
	if (!h->type || h->type > VIGIL_EV_TYPE_MAX)
		return *why = "event type out of range", -EPROTO;
	want = peer->type_size[h->type];
	if (!want)
		return *why = "event type not in the hello's schema", -EPROTO;
	if (peer->type_variable[h->type] ? len < want : len != want)
		return *why = "event size does not match the hello's schema", -EPROTO;
	/* A kind of a newer minor version: its size is the hello's, its
	 * content is not ours to check or read. */
	if (!vigil_stream_type_known(h->type)) {
		if (h->size != len || (len & 7))
			return *why = "event size disagrees with the record length", -EPROTO;
		out->event = h;
		return 1;
	}
	if (vigil_event_check(h, len, why))
		return -EPROTO;
	out->event = h;
	return 1;
}

void vigil_stream_ack_build(struct vigil_stream_ack *a, uint64_t offset)
{
	*a = (struct vigil_stream_ack){ .magic = VIGIL_STREAM_ACK_MAGIC, .offset = offset };
}

void vigil_stream_refusal_build(struct vigil_stream_ack *a, enum vigil_stream_refusal why)
{
	*a = (struct vigil_stream_ack){ .magic = VIGIL_STREAM_REFUSE_MAGIC, .flags = why };
}

const char *vigil_stream_refusal_text(const struct vigil_stream_ack *a)
{
	static const char *const text[] = {
		[VIGIL_REFUSE_NAME] = "our hello's node name (--node-name, default the host "
				      "name) is not our certificate's first DNS name",
		[VIGIL_REFUSE_BOUND_CERT] = "this stream is bound to another certificate name",
		[VIGIL_REFUSE_BOUND_ADDR] = "this stream is connected from another address",
		[VIGIL_REFUSE_CLEAR_NAME] = "our node name was proved by a certificate: it may "
					    "not be used in clear text",
		[VIGIL_REFUSE_FULL] = "it has no room for our stream",
	};
	static char other[32];

	if (a->magic != VIGIL_STREAM_REFUSE_MAGIC)
		return NULL;
	if (a->flags && a->flags <= VIGIL_REFUSE_MAX)
		return text[a->flags];
	snprintf(other, sizeof(other), "reason %u", a->flags);
	return other;
}

int vigil_stream_ack_check(const struct vigil_stream_ack *a)
{
	return a->magic == VIGIL_STREAM_ACK_MAGIC && !a->flags && !(a->offset & 7) ? 0 : -EPROTO;
}

double vigil_stream_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int vigil_boot_id(__u8 out[16])
{
	char s[64];
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC), n, k = 0;

	if (fd < 0)
		return -errno;
	n = read(fd, s, sizeof(s) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	s[n] = 0;
	for (int i = 0; i < n && k < 32; i++) {
		unsigned v;
		char c = s[i];

		if (c == '-' || c == '\n')
			continue;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			return -EINVAL;
		out[k / 2] = k & 1 ? (out[k / 2] | v) : v << 4;
		k++;
	}
	return k == 32 ? 0 : -EINVAL;
}

void vigil_boot_id_str(const __u8 id[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}
