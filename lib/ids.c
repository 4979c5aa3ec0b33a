// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "ids.h"

static void base64(char *out, size_t outsz, const unsigned char *in, size_t n)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0, i;

	for (i = 0; i + 2 < n && o + 4 < outsz; i += 3) {
		uint32_t v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];

		out[o++] = tbl[v >> 18];
		out[o++] = tbl[(v >> 12) & 63];
		out[o++] = tbl[(v >> 6) & 63];
		out[o++] = tbl[v & 63];
	}
	if (i < n && o + 4 < outsz) {
		uint32_t v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0);

		out[o++] = tbl[v >> 18];
		out[o++] = tbl[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = 0;
}

void vigil_exec_id(char *out, size_t outsz, const char *node, uint64_t ktime, uint32_t pid)
{
	char raw[VIGIL_EXEC_ID_MAX / 4 * 3];
	size_t n = strnlen(node, sizeof(raw) - 44);

	memcpy(raw, node, n);
	raw[n++] = ':';
	n += vigil_u64_dec(raw + n, ktime);
	raw[n++] = ':';
	n += vigil_u64_dec(raw + n, pid);
	base64(out, outsz, (const unsigned char *)raw, n);
}

int64_t vigil_realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

void vigil_rfc3339(char *out, size_t outsz, uint64_t ktime, int64_t offset)
{
	/* Events come in bursts within one second: format each second's date
	 * once. Two seconds are kept, since an event often names two times
	 * (its own and its process's start), which one would alternate. */
	static __thread struct {
		time_t sec;
		char prefix[32];
		size_t len;
	} cache[2] = { { .sec = -1 }, { .sec = -1 } };
	static __thread unsigned next;
	/* A hostile or corrupt time must not overflow: outside what int64
	 * nanoseconds hold (1970 to 2262) it is pinned to the nearest end. */
	__int128 wide = (__int128)ktime + offset;
	int64_t ns = wide < 0 ? 0 : wide > INT64_MAX ? INT64_MAX : (int64_t)wide;
	time_t sec = ns / 1000000000LL;
	uint32_t frac = ns % 1000000000LL;
	unsigned c;

	if (outsz < VIGIL_TIME_MAX) {
		*out = 0;
		return;
	}
	if (cache[0].sec == sec) {
		c = 0;
	} else if (cache[1].sec == sec) {
		c = 1;
	} else {
		struct tm tm;

		c = next;
		next ^= 1;
		gmtime_r(&sec, &tm);
		cache[c].len = strftime(cache[c].prefix, sizeof(cache[c].prefix), "%Y-%m-%dT%H:%M:%S.", &tm);
		cache[c].sec = sec;
	}
	memcpy(out, cache[c].prefix, cache[c].len);
	for (int i = 8; i >= 0; i--, frac /= 10)
		out[cache[c].len + i] = '0' + frac % 10;
	out[cache[c].len + 9] = 'Z';
	out[cache[c].len + 10] = 0;
}

static size_t hex_run(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isxdigit((unsigned char)s[i]) && !isupper((unsigned char)s[i]))
		i++;
	return i;
}

size_t vigil_container_id(const char *cg, size_t len, char *out, size_t outsz)
{
	static const char *prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-", "" };
	const char *end = cg + len, *comp, *p;
	size_t n;

	/* The innermost component that names one wins. */
	while (end > cg) {
		for (comp = end; comp > cg && comp[-1] != '/'; comp--)
			;
		n = end - comp;
		if (n > 14 && !strncmp(comp, "machine-", 8) && !strncmp(end - 6, ".scope", 6)) {
			/* systemd-nspawn: machine-NAME.scope */
			n -= 14;
			if (n >= outsz)
				n = outsz - 1;
			memcpy(out, comp + 8, n);
			out[n] = 0;
			return n;
		}
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
			size_t pl = strlen(prefixes[i]);

			if (n < pl + 64 || strncmp(comp, prefixes[i], pl))
				continue;
			p = comp + pl;
			if (hex_run(p, end - p) == 64 &&
			    (end - p == 64 || (end - p == 70 && !strncmp(p + 64, ".scope", 6)))) {
				n = 64 < outsz - 1 ? 64 : outsz - 1;
				memcpy(out, p, n);
				out[n] = 0;
				return n;
			}
		}
		end = comp > cg ? comp - 1 : cg;
	}
	return 0;
}

const char *vigil_signal_name(int sig, char *buf, size_t bufsz)
{
	const char *abbrev;

	if (sig <= 0)
		return NULL;
	abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, bufsz, "SIG%s", abbrev);
	else
		snprintf(buf, bufsz, "SIG%d", sig);
	return buf;
}
