/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One collector per export file: two writing the same file and its state
 * file (PATH.state) would interleave lines and overwrite each other's
 * offsets. PATH.lock holds an flock() for the collector's life and its pid,
 * so a second one is refused naming the first.
 */
#ifndef VIGIL_COLLECTOR_OUTPUT_LOCK_H
#define VIGIL_COLLECTOR_OUTPUT_LOCK_H

/* Takes PATH.lock: its descriptor (kept open until exit), or an error said
 * (-EBUSY: another collector holds it, named by its pid). */
int collector_output_lock(const char *export_path);

#endif
