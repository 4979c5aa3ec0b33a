/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Appends whole batches of JSON lines to a file, rotating by size as
 * Tetragon's --export-filename does: PATH, PATH.1 ... PATH.N, oldest last.
 * A batch is never split across files.
 */
#ifndef VIGIL_EXPORT_FILE_H
#define VIGIL_EXPORT_FILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct vigil_export_file {
	char *path;		/* NULL: write to fd as is (stdout), never rotate */
	int fd;
	uint64_t size;
	uint64_t max_size;	/* 0: never rotate */
	unsigned max_backups;
	uint64_t rotations;
	uint64_t bytes;
	uint64_t errors;
	bool sync;		/* rotation syncs the file and its folder */
};

/* Opens (creates) path for appending; -errno with nothing opened on failure. */
int vigil_export_open(struct vigil_export_file *x, const char *path, uint64_t max_size,
		      unsigned max_backups);
void vigil_export_fd(struct vigil_export_file *x, int fd);
int vigil_export_write(struct vigil_export_file *x, const void *data, size_t len);
/* The same, saying in *written how much of data is out when it fails: 0
 * when the file could be cut back to where the batch began (a file: a
 * batch is whole or absent), else what a pipe, terminal or device took,
 * which the caller must not write again (the rest continues the line). */
int vigil_export_write_some(struct vigil_export_file *x, const void *data, size_t len,
			    size_t *written);
/* Writes what the file holds through to the disk (fdatasync). */
int vigil_export_sync(struct vigil_export_file *x);
void vigil_export_close(struct vigil_export_file *x);

#endif
