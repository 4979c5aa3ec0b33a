// SPDX-License-Identifier: GPL-2.0
/*
 * js_read URL STREAM SUBJECTS [IDLE_S]: prints every message of a JetStream
 * stream, from its first, as one JSON object a line:
 *   {"subject":"...","id":"<Nats-Msg-Id>","data":<the message>}
 * until none came for IDLE_S seconds (default 1). For the tests: what the
 * collector published, as a consumer would read it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nats/nats.h>

int main(int argc, char **argv)
{
	natsConnection *nc = NULL;
	natsSubscription *sub = NULL;
	jsCtx *js = NULL;
	jsSubOptions so;
	natsStatus s;
	int64_t idle_ms = argc > 4 ? atof(argv[4]) * 1000 : 1000;
	long n = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: js_read URL STREAM SUBJECTS [IDLE_S]\n");
		return 2;
	}
	s = natsConnection_ConnectTo(&nc, argv[1]);
	if (s == NATS_OK)
		s = natsConnection_JetStream(&js, nc, NULL);
	if (s == NATS_OK) {
		jsSubOptions_Init(&so);
		so.Stream = argv[2];
		so.Ordered = true;	/* ephemeral, no acks, in stream order */
		so.Config.DeliverPolicy = js_DeliverAll;
		s = js_SubscribeSync(&sub, js, argv[3], NULL, &so, NULL);
	}
	while (s == NATS_OK) {
		natsMsg *m = NULL;
		const char *id = "";

		s = natsSubscription_NextMsg(&m, sub, idle_ms);
		if (s == NATS_TIMEOUT) {
			s = NATS_OK;
			break;
		}
		if (s != NATS_OK)
			break;
		natsMsgHeader_Get(m, "Nats-Msg-Id", &id);
		printf("{\"subject\":\"%s\",\"id\":\"%s\",\"data\":%.*s}\n", natsMsg_GetSubject(m), id,
		       natsMsg_GetDataLength(m), natsMsg_GetData(m));
		natsMsg_Destroy(m);
		n++;
	}
	if (s != NATS_OK)
		fprintf(stderr, "js_read: %s: %s\n", natsStatus_GetText(s), nats_GetLastError(NULL));
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_CloseAndWait(1000);
	return s == NATS_OK ? 0 : 1;
}
