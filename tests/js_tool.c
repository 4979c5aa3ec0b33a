// SPDX-License-Identifier: GPL-2.0
/*
 * For the tests, a JetStream client:
 *   js_tool read URL STREAM SUBJECTS [IDLE_S]
 *     prints every message of a stream, from its first, as one JSON object
 *     a line, {"subject":"...","id":"<Nats-Msg-Id>","data":<the message>},
 *     up to the last the stream held when it was sent, or until none came
 *     for IDLE_S seconds (default 1): what the collector published, as a
 *     consumer reads it;
 *   js_tool publish URL SUBJECT N
 *     publishes N messages {"n":K}, K = 1..N, each waiting for JetStream's
 *     ack, and prints "acked K" after each ack (tests/vm/fsync.sh: what a
 *     crash may not lose);
 *   js_tool lines URL STREAM SUBJECTS [IDLE_S]
 *     the same as a consumer of both layouts (docs/stream.md) reads it:
 *     every event's JSON line, one a line, a batch message split at its
 *     newlines; the consumer example of docs/stream.md;
 *   js_tool leader URL STREAM
 *     prints the name of the server that leads the stream ("" alone);
 *   js_tool add-stream URL STREAM SUBJECT MAX_MSGS [REPLICAS]
 *     makes a stream that takes at most MAX_MSGS messages (-1: no limit)
 *     and refuses the next ones (discard new): a JetStream that says no;
 *     with REPLICAS, that many replicas and a 10-minute duplicate window.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nats/nats.h>

static natsStatus add_stream(jsCtx *js, const char *name, const char *subject, long max_msgs,
			     int replicas)
{
	const char *subjects[] = { subject };
	jsStreamInfo *si = NULL;
	jsStreamConfig cfg;
	natsStatus s;

	jsStreamConfig_Init(&cfg);
	cfg.Name = name;
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.MaxMsgs = max_msgs;
	cfg.Discard = js_DiscardNew;
	if (replicas) {
		cfg.Replicas = replicas;
		cfg.Duplicates = 600 * 1000000000LL;
	}
	s = js_AddStream(&si, js, &cfg, NULL, NULL);
	jsStreamInfo_Destroy(si);
	return s;
}

static int leader(const char *url, const char *stream)
{
	natsConnection *nc = NULL;
	jsStreamInfo *si = NULL;
	jsCtx *js = NULL;
	natsStatus s = natsConnection_ConnectTo(&nc, url);

	if (s == NATS_OK)
		s = natsConnection_JetStream(&js, nc, NULL);
	if (s == NATS_OK)
		s = js_GetStreamInfo(&si, js, stream, NULL, NULL);
	if (s == NATS_OK)
		printf("%s\n", si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "");
	else
		fprintf(stderr, "js_tool: %s: %s\n", natsStatus_GetText(s), nats_GetLastError(NULL));
	jsStreamInfo_Destroy(si);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(1000);
	return s == NATS_OK ? 0 : 1;
}

/* A consumer of both layouts: a message on PREFIX.batch.NODE.BOOT.RING
 * holds Vigil-Lines JSON lines, each ending in a newline (checked here);
 * any other is one event's line. Batches of one ring follow each other in
 * the stream, each one's Vigil-First past the previous one's Vigil-Last. */
static void print_lines(natsMsg *m)
{
	const char *data = natsMsg_GetData(m), *v = NULL, *lines = NULL;
	int len = natsMsg_GetDataLength(m), n = 0;

	if (natsMsgHeader_Get(m, "Vigil-Last", &v) != NATS_OK || !v) {
		printf("%.*s\n", len, data);
		return;
	}
	for (int i = 0; i < len; i++)
		n += data[i] == '\n';
	natsMsgHeader_Get(m, "Vigil-Lines", &lines);
	if (!lines || atoi(lines) != n)
		fprintf(stderr, "js_tool: %s: %d lines, Vigil-Lines says %s\n", natsMsg_GetSubject(m),
			n, lines ? lines : "nothing");
	fwrite(data, 1, len, stdout);
}

static int publish(const char *url, const char *subject, long n)
{
	natsConnection *nc = NULL;
	jsCtx *js = NULL;
	natsStatus s = natsConnection_ConnectTo(&nc, url);
	char data[32];

	if (s == NATS_OK)
		s = natsConnection_JetStream(&js, nc, NULL);
	for (long k = 1; k <= n && s == NATS_OK; k++) {
		jsPubAck *pa = NULL;
		int len = snprintf(data, sizeof(data), "{\"n\":%ld}", k);

		s = js_Publish(&pa, js, subject, data, len, NULL, NULL);
		jsPubAck_Destroy(pa);
		if (s == NATS_OK) {
			printf("acked %ld\n", k);
			fflush(stdout);
		}
	}
	if (s != NATS_OK)
		fprintf(stderr, "js_tool publish: %s\n", natsStatus_GetText(s));
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	return s == NATS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	natsConnection *nc = NULL;
	natsSubscription *sub = NULL;
	jsCtx *js = NULL;
	jsSubOptions so;
	natsStatus s;
	int64_t idle_ms = argc > 5 ? atof(argv[5]) * 1000 : 1000;
	long n = 0;
	bool read, lines;

	if (argc == 4 && !strcmp(argv[1], "leader"))
		return leader(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "publish"))
		return publish(argv[2], argv[3], atol(argv[4]));
	if (argc < 5 || (strcmp(argv[1], "read") && strcmp(argv[1], "lines") &&
			 (strcmp(argv[1], "add-stream") || argc < 6))) {
		fprintf(stderr, "usage: js_tool read|lines URL STREAM SUBJECTS [IDLE_S]\n"
				"       js_tool add-stream URL STREAM SUBJECT MAX_MSGS [REPLICAS]\n");
		return 2;
	}
	lines = !strcmp(argv[1], "lines");
	read = lines || !strcmp(argv[1], "read");
	argv++;
	s = natsConnection_ConnectTo(&nc, argv[1]);
	if (s == NATS_OK)
		s = natsConnection_JetStream(&js, nc, NULL);
	if (s == NATS_OK && !read)
		s = add_stream(js, argv[2], argv[3], atol(argv[4]), argc > 6 ? atoi(argv[5]) : 0);
	else if (s == NATS_OK) {
		jsSubOptions_Init(&so);
		so.Stream = argv[2];
		so.Ordered = true;	/* ephemeral, no acks, in stream order */
		so.Config.DeliverPolicy = js_DeliverAll;
		s = js_SubscribeSync(&sub, js, argv[3], NULL, &so, NULL);
	}
	while (s == NATS_OK && read) {
		natsMsg *m = NULL;
		const char *id = "";

		jsMsgMetaData *meta = NULL;
		bool last;

		s = natsSubscription_NextMsg(&m, sub, idle_ms);
		if (s == NATS_TIMEOUT) {
			s = NATS_OK;
			break;
		}
		if (s != NATS_OK)
			break;
		/* The stream's last message when it was sent: done, also on a
		 * busy host whose agents never let the stream go idle. */
		last = natsMsg_GetMetaData(&meta, m) == NATS_OK && meta->NumPending == 0;
		jsMsgMetaData_Destroy(meta);
		if (lines) {
			print_lines(m);
		} else {
			natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
			printf("{\"subject\":\"%s\",\"id\":\"%s\",\"data\":%.*s}\n",
			       natsMsg_GetSubject(m), id, natsMsg_GetDataLength(m), natsMsg_GetData(m));
		}
		natsMsg_Destroy(m);
		n++;
		if (last)
			break;
	}
	if (s != NATS_OK)
		fprintf(stderr, "js_tool: %s: %s\n", natsStatus_GetText(s), nats_GetLastError(NULL));
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(1000);
	return s == NATS_OK ? 0 : 1;
}
