/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which maps are vigil's, for the tamper records of bpf() map updates and
 * deletes (bpf/tamper.bpf.c): the ids in the pinned vigil_tamper_maps.
 * The kernel has no owner to ask, so the agent lists them after every
 * change of its own: the maps pinned in its folder, the maps every program
 * linked there uses, and the inner maps its maps of maps hold (the pattern
 * tries a policy load makes fresh). Ids no longer found are dropped.
 */
#ifndef VIGIL_TAMPER_MAPS_H
#define VIGIL_TAMPER_MAPS_H

/* 0 or a negative errno, logged. */
int vigil_tamper_maps_sync(const char *pin_dir);

#endif
