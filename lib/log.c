// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* See log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "json.h"
#include "log.h"

int vlog_verbose;
const char *vlog_prog = "vigil";

static enum vlog_level level = VLOG_INFO;
static bool json_form, timestamps, journal;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* syslog priorities, as journald reads them from a <N> prefix */
static const int journal_prio[] = { 3, 4, 6, 7 };

int vlog_set_level(const char *name)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(*level_names); i++)
		if (!strcmp(name, level_names[i])) {
			level = i;
			vlog_verbose = level == VLOG_DEBUG;
			return 0;
		}
	return -EINVAL;
}

int vlog_set_format(const char *name)
{
	if (strcmp(name, "text") && strcmp(name, "json"))
		return -EINVAL;
	json_form = !strcmp(name, "json");
	return 0;
}

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd gave the service:
 * it is stderr only when they match (a child's redirected stderr is not). */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       st.st_dev == dev && st.st_ino == ino;
}

void vlog_daemon(void)
{
	journal = stderr_is_journal();
	timestamps = !journal;
}

bool vlog_enabled(enum vlog_level l)
{
	return l <= level;
}

static void now_text(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* One line: msg, then the system's error (err, 0: none), then tail. */
static void say(enum vlog_level l, const char *msg, int err, const char *tail)
{
	const char *why = err ? strerror(err < 0 ? -err : err) : NULL;
	char t[64] = "", prio[8] = "";

	if (!vlog_enabled(l))
		return;
	if (json_form || timestamps)
		now_text(t, sizeof(t));
	if (journal)
		snprintf(prio, sizeof(prio), "<%d>", journal_prio[l]);
	if (json_form) {
		struct vigil_buf b = {};
		struct jw w;

		jw_begin(&w, &b);
		jw_obj(&w, NULL);
		if (!journal)
			jw_cstr(&w, "time", t);
		jw_cstr(&w, "level", level_names[l]);
		jw_cstr(&w, "prog", vlog_prog);
		jw_cstr(&w, "msg", msg);
		if (why)
			jw_cstr(&w, "error", why);
		if (*tail)
			jw_cstr(&w, "hint", tail);
		jw_end(&w);
		if (!b.oom)
			fprintf(stderr, "%s%.*s\n", prio, (int)b.len, b.p);
		vbuf_free(&b);
		return;
	}
	fprintf(stderr, "%s%s%s%s: %s%s%s%s%s\n", prio, t, *t ? " " : "", vlog_prog, msg,
		why ? ": " : "", why ? why : "", *tail ? " " : "", tail);
}

/* EPERM and EACCES from a user who is not root: that is the cause. */
static const char *root_hint(int err)
{
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
		return "(needs root: CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)";
	return "";
}

#define SAY(l, fmt, err, tail)							\
	do {									\
		char line[1024];						\
		va_list ap;							\
										\
		va_start(ap, fmt);						\
		vsnprintf(line, sizeof(line), fmt, ap);				\
		va_end(ap);							\
		say(l, line, err, tail);					\
	} while (0)

int vlog_err(int err, const char *fmt, ...)
{
	err = err < 0 ? err : -err;
	SAY(VLOG_ERROR, fmt, err, root_hint(err));
	return err;
}

int vlog_refuse(int err, const char *fmt, ...)
{
	SAY(VLOG_ERROR, fmt, 0, "");
	return err < 0 ? err : -err;
}

int vlog_usage(const char *fmt, ...)
{
	SAY(VLOG_ERROR, fmt, 0, "");
	return -VIGIL_EUSAGE;
}

void vlog_warn(const char *fmt, ...)
{
	SAY(VLOG_WARN, fmt, 0, "");
}

void vlog_info(const char *fmt, ...)
{
	SAY(VLOG_INFO, fmt, 0, "");
}

void vlog_debug(const char *fmt, ...)
{
	if (vlog_enabled(VLOG_DEBUG))
		SAY(VLOG_DEBUG, fmt, 0, "");
}

void vlog_line(enum vlog_level l, const char *text)
{
	char line[1024];
	size_t n = strcspn(text, "\n");

	if (!vlog_enabled(l))
		return;
	snprintf(line, sizeof(line), "%.*s", (int)n, text);
	say(l, line, 0, "");
}

int vigil_exit_status(int err)
{
	if (!err)
		return VIGIL_EXIT_OK;
	return err == -VIGIL_EUSAGE ? VIGIL_EXIT_USAGE : VIGIL_EXIT_FAIL;
}
