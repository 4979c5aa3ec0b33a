/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vigil-collector shows operators over HTTP (--metrics, lib/
 * http_health.h): its counters in Prometheus's text format, rendered on
 * the event loop (docs/operations.md lists every series), and whether it is
 * ready (listening, its output writable).
 */
#ifndef VIGIL_COLLECTOR_METRICS_H
#define VIGIL_COLLECTOR_METRICS_H

#include <stdbool.h>

struct collector;
struct vigil_buf;

void collector_metrics(struct vigil_buf *out, const struct collector *c);
bool collector_readiness(struct vigil_buf *json, const struct collector *c);

#endif
