// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Options from a config file (--config FILE, opts.h): one option a line,
 * by its long name, as `name = value`, or `name` alone for an option that
 * takes no value (`name = true|false` too); `#` starts a comment. Each
 * value goes through the option's own setter, so a file is checked as the
 * command line is, and an error names FILE:LINE. Options the command line
 * gave are left as it gave them: the command line wins (a list option
 * given there replaces the file's entries).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "opts.h"

#define CONFIG_MAX (64 << 10)	/* a config file is short: refuse more */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* The file's text, if root's own, not writable by others, a regular file
 * of at most CONFIG_MAX bytes: what it sets, an agent run as root does. */
static char *read_config(const char *path)
{
	struct stat st;
	char *text = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		vlog_err(-errno, "--config %s", path);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    st.st_size > CONFIG_MAX) {
		vlog_refuse(-EPERM, "--config %s: refused: it must be a regular file of at most %d "
			 "bytes, owned by root and writable by no one else", path, CONFIG_MAX);
	} else if (!(text = calloc(1, st.st_size + 1))) {
		vlog_err(-ENOMEM, "--config %s", path);
	} else if ((n = read(fd, text, st.st_size)) != st.st_size) {
		vlog_err(n < 0 ? -errno : -EIO, "--config %s: cannot read it", path);
		free(text);
		text = NULL;
	}
	close(fd);
	return text;
}

static const struct vigil_opt *find(const struct vigil_opt *t, size_t n, const char *name,
				    size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].name && !strcmp(t[i].name, name)) {
			*at = i;
			return &t[i];
		}
	return NULL;
}

/* One line: 0, or an error said with where. */
static int set_line(const struct vigil_opt *t, size_t n, char *line, void *base,
		    const bool *seen, const char *where)
{
	char *eq = strchr(line, '='), *name = line, *value = NULL;
	const struct vigil_opt *o;
	size_t i;

	if (eq) {
		*eq = 0;
		value = trim(eq + 1);
		size_t len = strlen(value);

		if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
			value[len - 1] = 0;
			value++;
		}
	}
	name = trim(name);
	if (!(o = find(t, n, name, &i)) || !strcmp(name, "config") || !strcmp(name, "help") ||
	    !strcmp(name, "version"))
		return vlog_refuse(-EINVAL, "%s: unknown option '%s' (a long option's name, without --)",
				where, name);
	if (seen[i])
		return 0;	/* the command line gave it */
	if (!o->arg) {
		if (value && !strcmp(value, "false"))
			return 0;
		if (value && strcmp(value, "true"))
			return vlog_refuse(-EINVAL, "%s: option '%s' takes no value (or true, false)",
					where, name);
		value = NULL;
	} else if (!value || !*value) {
		return vlog_refuse(-EINVAL, "%s: option '%s' needs a value: %s = %s", where, name,
				name, o->arg);
	}
	if (o->set(o, base, value)) {
		/* The setter said what; this says where. */
		return vlog_refuse(-EINVAL, "%s: option '%s' refused", where, name);
	}
	return 0;
}

int vigil_opts_file(const struct vigil_opt *t, size_t n, const char *path, void *base,
		    const bool *seen)
{
	char *text = read_config(path), *line, *next, where[512];
	unsigned lineno = 0;
	int err = 0;

	if (!text)
		return -EINVAL;
	/* Kept to the end: string options point into it. */
	for (line = text; line && !err; line = next) {
		char *hash;

		lineno++;
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		if ((hash = strchr(line, '#')))
			*hash = 0;
		line = trim(line);
		if (!*line)
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		err = set_line(t, n, line, base, seen, where);
	}
	if (err)
		free(text);	/* refused: the program stops, nothing points in */
	return err;
}
