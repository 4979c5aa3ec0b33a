/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef VIGIL_VERSION_H
#define VIGIL_VERSION_H
#define VIGIL_VERSION "0.1.0"
#endif
