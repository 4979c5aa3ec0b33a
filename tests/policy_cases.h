/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy parser's cases, one table: tests/unit_policy.c checks each
 * (accepted as it reads, or refused at its line and column saying what),
 * tests/fuzz/make_seeds.c writes each as a seed of the policy fuzz target.
 * Include once, after "policy_parse.h" and <netinet/in.h>.
 */
#ifndef VIGIL_TESTS_POLICY_CASES_H
#define VIGIL_TESTS_POLICY_CASES_H

/* What the first rule must hold; NULL fields are not checked. */
struct want_rule {
	int action, direction, protocol;	/* -1: not checked */
	unsigned port_lo, port_hi;		/* both 0: not checked */
	const char *cidr;			/* the first block, as formatted */
	const char *cgroup;
	unsigned n_rules;			/* 0: not checked */
};

struct policy_case {
	const char *what;
	const char *yaml;
	const char *pos;	/* "L:C" where it is refused; NULL: accepted */
	const char *text;	/* in the message */
	struct want_rule rule;
};

#define ANY { -1, -1, -1, 0, 0, NULL, NULL, 0 }
#define AAAA_15 "aaaaaaaaaaaaaaa"
#define AAAA_255 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 \
	AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 AAAA_15 /* 255 bytes */
#define RULE(act, dir, proto, lo, hi, cidr, cg) { act, dir, proto, lo, hi, cidr, cg, 0 }

static const struct policy_case policy_cases[] = {
	/* What a rule reads as. */
	{ "defaults: every direction, every protocol and port",
	  "rules:\n  - action: drop\n", NULL, NULL,
	  RULE(VIGIL_ACT_DROP, VIGIL_DIR_INGRESS | VIGIL_DIR_EGRESS, 0, 0, 65535, NULL, NULL) },
	{ "a full rule",
	  "version: 1\nrules:\n  - name: no-ssh-out\n    action: reject\n    direction: egress\n"
	  "    protocol: tcp\n    cidr: [10.0.0.0/8, \"2001:db8::/32\"]\n    port: 22\n", NULL, NULL,
	  RULE(VIGIL_ACT_REJECT, VIGIL_DIR_EGRESS, IPPROTO_TCP, 22, 22, "10.0.0.0/8", NULL) },
	{ "a port range", "rules:\n  - action: drop\n    port: 1-65535\n", NULL, NULL,
	  RULE(-1, -1, -1, 1, 65535, NULL, NULL) },
	{ "an IPv4-mapped block is kept as IPv4",
	  "rules:\n  - action: drop\n    cidr: \"::ffff:10.99.0.0/120\"\n", NULL, NULL,
	  RULE(-1, -1, -1, 0, 0, "10.99.0.0/24", NULL) },
	{ "the whole IPv4-mapped range is kept as 0.0.0.0/0",
	  "rules:\n  - action: drop\n    cidr: \"::ffff:0:0/96\"\n", NULL, NULL,
	  RULE(-1, -1, -1, 0, 0, "0.0.0.0/0", NULL) },
	{ "an IPv6 block wider than the mapped range stays IPv6",
	  "rules:\n  - action: drop\n    cidr: \"::/64\"\n", NULL, NULL,
	  RULE(-1, -1, -1, 0, 0, "::/64", NULL) },
	{ "a bare address is a /32", "rules:\n  - action: drop\n    cidr: 192.0.2.1\n", NULL, NULL,
	  RULE(-1, -1, -1, 0, 0, "192.0.2.1/32", NULL) },
	{ "a trailing / on a cgroup path is dropped",
	  "rules:\n  - action: deny\n    cgroup: /a/b/\n", NULL, NULL,
	  RULE(VIGIL_ACT_DENY, -1, -1, 0, 0, NULL, "/a/b") },
	{ "a cgroup component that merely starts with a dot",
	  "rules:\n  - action: deny\n    cgroup: a/.hidden/..b\n", NULL, NULL,
	  RULE(-1, -1, -1, 0, 0, NULL, "a/.hidden/..b") },
	{ "udp, ingress, reset", "rules:\n  - action: reset\n    protocol: udp\n"
	  "    direction: ingress\n", NULL, NULL,
	  RULE(VIGIL_ACT_RESET, VIGIL_DIR_INGRESS, IPPROTO_UDP, 0, 0, NULL, NULL) },
	{ "four rules, flow and block style",
	  "rules:\n  - {name: a, action: drop}\n  - action: allow\n    port: 80\n"
	  "  - {action: deny, cgroup: x}\n  - action: reset\n    netns: [blue, /proc/1/ns/net]\n"
	  "    interfaces: veth0\n", NULL, NULL,
	  { -1, -1, -1, 0, 0, NULL, NULL, 4 } },
	{ "an empty rule list", "rules: []\n", NULL, NULL, { -1, -1, -1, 0, 0, NULL, NULL, 0 } },

	/* Refused where it is, saying what. */
	{ "bad YAML: where the parser stopped, and where the list began",
	  "rules:\n  - action: drop\n    cidr: [10.0.0.0/8\n", "4:1",
	  "did not find expected ',' or ']' while parsing a flow sequence (begun at line 3, "
	  "column 11)", ANY },
	{ "an unknown key, at the key", "rules:\n  - action: drop\n    colour: red\n", "3:5",
	  "unknown key 'colour' in a rule (known: name, action,", ANY },
	{ "a bad CIDR, at the list item",
	  "rules:\n  - action: drop\n    cidr: [10.0.0.0/8, 300.1.1.1/8]\n", "3:24",
	  "bad CIDR: expected an IPv4 or IPv6 address", ANY },
	{ "host bits set (IPv6)", "rules:\n  - action: drop\n    cidr:\n      - 2001:db8::/32\n"
	  "      - 2001:db8::1/32\n", "5:9", "bad CIDR: host bits set past /32", ANY },
	{ "host bits set (IPv4)", "rules:\n  - action: drop\n    cidr: 10.0.0.1/24\n", "3:11",
	  "host bits set past /24", ANY },
	{ "a prefix longer than the family allows", "rules:\n  - action: drop\n    cidr: 10.0.0.0/33\n",
	  "3:11", "the prefix length must be 0-32", ANY },
	{ "an empty prefix", "rules:\n  - action: drop\n    cidr: 10.0.0.0/\n", "3:11",
	  "the prefix length must be 0-32", ANY },
	{ "an address with a zone", "rules:\n  - action: drop\n    cidr: \"fe80::1%eth0\"\n", "3:11",
	  "expected an IPv4 or IPv6 address", ANY },
	{ "a short IPv4 address", "rules:\n  - action: drop\n    cidr: 10.1\n", "3:11",
	  "expected an IPv4 or IPv6 address", ANY },
	{ "a port range upside down", "rules:\n  - action: drop\n    port: 9000-80\n", "3:11",
	  "bad port range: the lower end is above the upper", ANY },
	{ "a port out of range", "rules:\n  - action: drop\n    port: 70000\n", "3:11",
	  "bad port: expected a number 1-65535", ANY },
	{ "port 0", "rules:\n  - action: drop\n    port: 0\n", "3:11", "port 0 matches nothing", ANY },
	{ "a range from port 0", "rules:\n  - action: drop\n    port: 0-100\n", "3:11",
	  "port 0 matches nothing", ANY },
	{ "an open port range", "rules:\n  - action: drop\n    port: 8000-\n", "3:11",
	  "the upper end is not a number", ANY },
	{ "spaces in a port range", "rules:\n  - action: drop\n    port: \"8000 - 8100\"\n", "3:11",
	  "bad port range '8000 - 8100': write it without spaces", ANY },
	{ "a signed port", "rules:\n  - action: drop\n    port: +22\n", "3:11",
	  "expected a number 1-65535", ANY },
	{ "a list of ports", "rules:\n  - action: drop\n    port: [22, 80]\n", "3:11",
	  "'port' takes a single value, not a list", ANY },
	{ "an unknown action", "rules:\n  - action: explode\n", "2:13",
	  "unknown action (one of: allow, drop, reject, reset, deny)", ANY },
	{ "an action in capitals", "rules:\n  - action: DROP\n", "2:13",
	  "unknown action 'DROP': words are lower case, 'drop'", ANY },
	{ "a key one letter off", "rules:\n  - action: drop\n    ports: 80\n", "3:5",
	  "unknown key 'ports' in a rule (did you mean 'port'?)", ANY },
	{ "a tab for indentation", "rules:\n\t- action: drop\n", "2:1",
	  "bad YAML: a tab; YAML indents with spaces", ANY },
	{ "a protocol in capitals", "rules:\n  - action: drop\n    protocol: TCP\n", "3:15",
	  "unknown protocol 'TCP': words are lower case, 'tcp' (one of: tcp, udp, udplite, sctp, dccp, icmp, icmpv6, any)", ANY },
	{ "a port with a protocol that has none",
	  "rules:\n  - action: drop\n    protocol: icmp\n    port: 22\n", "4:5",
	  "'port' with protocol icmp: only tcp, udp, udplite, sctp and dccp have ports", ANY },
	{ "the protocols with ports", "rules:\n  - action: drop\n    protocol: sctp\n    port: 9\n",
	  NULL, NULL, RULE(VIGIL_ACT_DROP, VIGIL_DIR_INGRESS | VIGIL_DIR_EGRESS, IPPROTO_SCTP, 9, 9, NULL, NULL) },
	{ "a rule without an action", "rules:\n  - cidr: 10.0.0.0/8\n", "2:5", "rule has no 'action'",
	  ANY },
	{ "deny without a cgroup", "rules:\n  - action: deny\n", "2:5", "action deny needs 'cgroup'",
	  ANY },
	{ "interfaces without their namespace", "rules:\n  - action: drop\n    interfaces: eth0\n",
	  "3:5", "'interfaces' needs 'netns'", ANY },
	{ "duplicate rule names", "rules:\n  - {name: a, action: drop}\n  - {name: a, action: allow}\n",
	  "3:5", "this rule's name 'a' is used by an earlier rule, at /", ANY },
	{ "a key twice in one rule", "rules:\n  - action: allow\n    action: drop\n", "3:5",
	  "'action' given twice in one rule (first at line 2)", ANY },
	{ "'version' twice", "version: 1\nversion: 1\nrules:\n  - action: drop\n", "2:1",
	  "'version' given twice", ANY },
	{ "'rules' twice", "rules:\n  - action: drop\nrules:\n  - action: allow\n", "3:1",
	  "'rules' given twice", ANY },
	{ "a cgroup path with '.'", "rules:\n  - action: deny\n    cgroup: /a/./b\n", "3:16",
	  "'.' and '..' path components are refused", ANY },
	{ "a cgroup path with '..'", "rules:\n  - action: deny\n    cgroup: a/../b\n", "3:15",
	  "'.' and '..' path components are refused", ANY },
	{ "a cgroup path ending in '.'", "rules:\n  - action: deny\n    cgroup: a/.\n", "3:15",
	  "'.' and '..' path components are refused", ANY },
	{ "the cgroup path '.'", "rules:\n  - action: deny\n    cgroup: .\n", "3:13",
	  "'.' and '..' path components are refused", ANY },
	{ "a quoted cgroup path with '.'", "rules:\n  - action: deny\n    cgroup: \"/a/./b\"\n", "3:17",
	  "'.' and '..' path components are refused", ANY },
	{ "an empty cgroup path component", "rules:\n  - action: deny\n    cgroup: a//b\n", "3:15",
	  "an empty path component ('//')", ANY },
	{ "a control character in a cgroup path", "rules:\n  - action: deny\n    cgroup: \"a\\tb\"\n",
	  "3:15", "a control character in the path", ANY },
	{ "a control character in a namespace", "rules:\n  - action: reset\n    netns: \"a\\x1bb\"\n",
	  "3:12", "bad network namespace", ANY },
	{ "a control character in an interface name",
	  "rules:\n  - action: drop\n    netns: blue\n    interfaces: \"e\\x07th0\"\n", "4:17",
	  "bad interface name", ANY },
	{ "a YAML anchor and alias", "rules:\n  - &r {action: drop}\n  - *r\n", "2:5",
	  "YAML anchors and aliases are refused", ANY },
	{ "an alias in a value",
	  "rules:\n  - {name: a, action: drop, cidr: &n 10.0.0.0/8}\n  - {name: b, action: drop, cidr: *n}\n",
	  "2:35", "YAML anchors and aliases are refused", ANY },
	{ "a merge key", "rules:\n  - &b {action: drop}\n  - <<: *b\n", "2:5",
	  "YAML anchors and aliases are refused", ANY },
	{ "a standard tag", "rules:\n  - action: drop\n    port: !!str 22\n", "3:11",
	  "YAML tags (such as !!str) are refused", ANY },
	{ "a custom tag", "rules:\n  - action: !allow drop\n", "2:13",
	  "YAML tags (such as !!str) are refused", ANY },
	{ "a second document", "rules:\n  - action: drop\n---\nrules: []\n", "3:1",
	  "a second YAML document", ANY },

	/* Export filters (docs/policy.md, "Filters"): the spellings the docs
	 * give, and the shapes a hostile or mistyped file may take. */
	{ "a filter as the docs write it",
	  "filters:\n  - name: quiet-probes\n    action: deny\n    kinds: [exec, exit]\n"
	  "    binary: /usr/bin/curl\n    binary_prefix: /opt/probes/\n    uid: 1000-1999\n"
	  "    netns: blue\n", NULL, NULL, ANY },
	{ "an allow filter, every kind, lists of binaries",
	  "filters:\n  - action: allow\n    binary: [/a, /b]\n    binary_prefix: [/c/, /d/]\n"
	  "    uid: 0\n", NULL, NULL, ANY },
	{ "a filter range of 4096 uids", "filters:\n  - action: deny\n    uid: 1000-5095\n", NULL,
	  NULL, ANY },
	{ "filters: an empty list", "filters: []\n", NULL, NULL, ANY },
	{ "filters: a mapping", "filters:\n  action: deny\n", "2:3",
	  "'filters' is a list of filters, not a mapping", ANY },
	{ "filters: nothing", "filters:\n", "1:9", "'filters' is a list of filters, not a scalar",
	  ANY },
	{ "a filter that is a list", "filters:\n  - [action, deny]\n", "2:5",
	  "a filter is a mapping", ANY },
	{ "a filter that is empty", "filters:\n  -\n", "2:4", "a filter is a mapping", ANY },
	{ "a filter without an action", "filters:\n  - kinds: [exec]\n", "2:5",
	  "a filter needs 'action: deny' or 'action: allow'", ANY },
	{ "a filter's action that is a rule's", "filters:\n  - action: drop\n", "2:13",
	  "action", ANY },
	{ "a key given twice in a filter", "filters:\n  - action: deny\n    action: allow\n",
	  "3:5", "'action' given twice in one filter", ANY },
	{ "two filters of one name",
	  "filters:\n  - name: a\n    action: deny\n  - name: a\n    action: allow\n", "4:5",
	  "this filter's name 'a' is used by another filter", ANY },
	{ "a filter named not_allowed", "filters:\n  - name: not_allowed\n    action: deny\n",
	  "2:11", "'not_allowed' names what allow filters drop", ANY },
	{ "a filter name with a space", "filters:\n  - name: \"a b\"\n    action: deny\n", "2:11",
	  "printable characters only", ANY },
	{ "a never-filtered kind", "filters:\n  - action: deny\n    kinds: [exec, policy_hit]\n",
	  "3:19", "'policy_hit' records are never filtered", ANY },
	{ "kinds as a mapping", "filters:\n  - action: deny\n    kinds: {exec: 1}\n", "3:12",
	  "'kinds' takes a value or a list, not a mapping", ANY },
	{ "kinds nested", "filters:\n  - action: deny\n    kinds: [[exec]]\n", "3:13",
	  "'kinds' takes a single value, not a list", ANY },
	{ "kinds: an empty list", "filters:\n  - action: deny\n    kinds: []\n", "3:12",
	  "'kinds' is an empty list", ANY },
	{ "a filter uid range reversed", "filters:\n  - action: deny\n    uid: 1999-1000\n",
	  "3:10", "bad uid", ANY },
	{ "a filter uid past 32 bits",
	  "filters:\n  - action: deny\n    uid: 99999999999999999999999\n", "3:10", "bad uid",
	  ANY },
	{ "a filter uid of -1", "filters:\n  - action: deny\n    uid: 4294967295\n", "3:10",
	  "bad uid", ANY },
	{ "a filter uid range of 4097 uids", "filters:\n  - action: deny\n    uid: 1000-5096\n",
	  "3:10", "bad uid: a range of at most 4096 uids", ANY },
	{ "every uid in a filter", "filters:\n  - action: deny\n    uid: 0-4294967294\n", "3:10",
	  "bad uid: a range of at most 4096 uids", ANY },
	{ "a filter uid as a list", "filters:\n  - action: deny\n    uid: [1, 2]\n", "3:10",
	  "'uid' takes a single value, not a list", ANY },
	{ "an empty binary", "filters:\n  - action: deny\n    binary: \"\"\n", "3:13",
	  "bad binary", ANY },
	{ "a binary with a NUL byte",
	  "filters:\n  - action: deny\n    binary: \"/usr/bin/curl\\0x\"\n", "3:13",
	  "holds a NUL byte", ANY },
	{ "a binary with a newline", "filters:\n  - action: deny\n    binary: \"/a\\nb\"\n", "3:13",
	  "bad binary", ANY },
	{ "a binary of 256 bytes",
	  "filters:\n  - action: deny\n    binary: /" AAAA_255 "\n", "3:13", "bad binary", ANY },
	{ "a binary prefix that is relative",
	  "filters:\n  - action: deny\n    binary_prefix: [/a/, b/]\n", "3:26", "bad binary",
	  ANY },
	{ "a filter netns with a slash, not absolute",
	  "filters:\n  - action: deny\n    netns: a/b\n", "3:12", "bad network namespace", ANY },
	{ "a filter netns of ..", "filters:\n  - action: deny\n    netns: ..\n", "3:12",
	  "bad network namespace", ANY },
	{ "a filter cgroup with //", "filters:\n  - action: deny\n    cgroup: a//b\n", "3:15",
	  "bad cgroup: an empty path component", ANY },
	{ "an anchored filter", "filters:\n  - &f\n    action: deny\n  - *f\n", "2:5",
	  "YAML anchors and aliases are refused", ANY },
	{ "filters given twice", "filters: []\nfilters: []\n", "2:1", "'filters' given twice",
	  ANY },
};

#undef ANY
#undef RULE

#endif
