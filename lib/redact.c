// SPDX-License-Identifier: GPL-2.0
/* The default secret names (lib/redact.h). */
#include <stddef.h>
#include "redact.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define KEY(w) { VIGIL_REDACT_WORD, VIGIL_REDACT_EQ | VIGIL_REDACT_NEXT, NULL, w }
#define SUFFIX(w) { VIGIL_REDACT_SUFFIX, VIGIL_REDACT_EQ, NULL, w }

static const struct vigil_redact_entry defaults[] = {
	KEY("password"), KEY("passwd"), KEY("pass"), KEY("pwd"), KEY("secret"), KEY("token"),
	KEY("api_key"), KEY("apikey"), KEY("access_key"), KEY("secret_key"),
	KEY("access_token"), KEY("auth_token"), KEY("client_secret"), KEY("private_key"),
	KEY("credentials"),
	SUFFIX("_password"), SUFFIX("_passwd"), SUFFIX("_pass"), SUFFIX("_pwd"), SUFFIX("_secret"),
	SUFFIX("_token"), SUFFIX("_api_key"), SUFFIX("_apikey"), SUFFIX("_access_key"),
	SUFFIX("_secret_key"), SUFFIX("_private_key"),
	/* a program's own spelling: mysql -pSECRET, curl -u user:pw */
	{ VIGIL_REDACT_ATTACHED, VIGIL_REDACT_REST, "mysql", "p" },
	{ VIGIL_REDACT_ATTACHED, VIGIL_REDACT_REST, "mysqldump", "p" },
	{ VIGIL_REDACT_ATTACHED, VIGIL_REDACT_REST, "mariadb", "p" },
	{ VIGIL_REDACT_WORD, VIGIL_REDACT_NEXT | VIGIL_REDACT_AFTER_COLON, "curl", "u" },
	{ VIGIL_REDACT_WORD, VIGIL_REDACT_NEXT | VIGIL_REDACT_AFTER_COLON, "curl", "user" },
	{ VIGIL_REDACT_WORD, VIGIL_REDACT_NEXT | VIGIL_REDACT_AFTER_COLON, "wget", "user" },
};

const struct vigil_redact_set vigil_redact_defaults = {
	.on = true,
	.urls = true,
	.entries = defaults,
	.n = N(defaults),
};
