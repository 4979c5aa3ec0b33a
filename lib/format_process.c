// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The process object, in either form (format_process.h). Both forms write
 * the same fields the same way, with Tetragon's names; they differ in
 * which fields, their order, the flag words, and which uid is "uid"
 * (vigil's: the real one; Tetragon's: the effective one at exec). Each
 * form is a list below, so a field is written by one piece of code.
 */
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "format_tetragon_json.h"
#include "ids.h"
#include "json.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

/* Tetragon's CapabilitiesType names, by capability number. */
static const char *const cap_names[] = {
	"CAP_CHOWN", "DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

/* A capability set as a list of names; a capability newer than the
 * schema by its number, which protojson takes for an open enum. */
static void caps_list(struct jw *w, const char *key, uint64_t set)
{
	jw_arr(w, key);
	for (unsigned i = 0; i < 64; i++) {
		if (!(set & (1ULL << i)))
			continue;
		if (i < N(cap_names)) {
			jw_cstr(w, NULL, cap_names[i]);
		} else {
			jw_u64(w, NULL, i);
		}
	}
	jw_arr_end(w);
}

static void caps_json(struct jw *w, const char *key, const struct vigil_exec_creds *c)
{
	jw_obj(w, key);
	caps_list(w, "permitted", c->cap_permitted);
	caps_list(w, "effective", c->cap_effective);
	caps_list(w, "inheritable", c->cap_inheritable);
	jw_end(w);
}

/* process_credentials: the real ids from p, the effective ones and the rest
 * from e, the cache entry, when it is known. */
static void process_creds(struct vigil_formatter *f, struct jw *w, const struct vigil_proc *p,
			  const struct vigil_proc_entry *e)
{
	/* All from the exec when it is known, so the ids are of one moment. */
	const struct vigil_proc *at = e ? &e->proc : p;

	jw_obj(w, "process_credentials");
	jw_u64(w, "uid", at->uid);
	jw_u64(w, "gid", at->gid);
	if (e) {
		jw_u64(w, "euid", e->creds.euid);
		jw_u64(w, "egid", e->creds.egid);
		if (f->opts.process_cred) {
			jw_u64(w, "suid", e->creds.suid);
			jw_u64(w, "sgid", e->creds.sgid);
			jw_u64(w, "fsuid", e->creds.fsuid);
			jw_u64(w, "fsgid", e->creds.fsgid);
			caps_json(w, "caps", &e->creds);
		}
	}
	jw_end(w);
}

static const char *const ns_names[VIGIL_NS_MAX] = {
	[VIGIL_NS_UTS] = "uts", [VIGIL_NS_IPC] = "ipc", [VIGIL_NS_MNT] = "mnt",
	[VIGIL_NS_PID] = "pid", [VIGIL_NS_PID_FOR_CHILDREN] = "pid_for_children",
	[VIGIL_NS_NET] = "net", [VIGIL_NS_TIME] = "time",
	[VIGIL_NS_TIME_FOR_CHILDREN] = "time_for_children", [VIGIL_NS_CGROUP] = "cgroup",
	[VIGIL_NS_USER] = "user",
};

static void ns_json(struct jw *w, const struct vigil_exec_creds *c)
{
	jw_obj(w, "ns");
	for (unsigned i = 0; i < VIGIL_NS_MAX; i++) {
		if (!c->ns[i])
			continue;
		jw_obj(w, ns_names[i]);
		jw_u64(w, "inum", c->ns[i]);
		if (c->ns_host & (1u << i))
			jw_bool(w, "is_host", true);
		jw_end(w);
	}
	jw_end(w);
}

/* Whether the exec ex adds binary_properties to its process object. */
static bool has_binary_properties(const struct vigil_exec *ex)
{
	return (ex->creds.secureexec &
		(VIGIL_SECEXEC_SETUID | VIGIL_SECEXEC_SETGID | VIGIL_SECEXEC_FILE_CAPS)) ||
	       (ex->flags & VIGIL_EXEC_UNLINKED);
}

/* Tetragon's binary_properties, from the exec event itself: what a
 * set-id or file-capability exec changed, and for a binary that is not at
 * a path, its file: the old path or anonymous name marked " (deleted)" as
 * the kernel marks it, its inode number and link count (0: fileless). */
static void binary_properties_json(struct vigil_formatter *f, struct jw *w,
				   const struct vigil_exec *ex, bool inode_str)
{
	const struct vigil_exec_creds *c = &ex->creds;
	const char *file = ex->data + ex->binary_len + ex->args_len + ex->cwd_len + ex->cgroup_len;
	uint32_t s = c->secureexec;
	bool unlinked = ex->flags & VIGIL_EXEC_UNLINKED;

	if (!has_binary_properties(ex))
		return;
	jw_obj(w, "binary_properties");
	if (s & VIGIL_SECEXEC_SETUID)
		jw_u64(w, "setuid", c->euid);
	if (s & VIGIL_SECEXEC_SETGID)
		jw_u64(w, "setgid", c->egid);
	if (s & (VIGIL_SECEXEC_FILE_CAPS | VIGIL_SECEXEC_SETUID_ROOT | VIGIL_SECEXEC_SETGID_ROOT)) {
		jw_arr(w, "privileges_changed");
		if (s & VIGIL_SECEXEC_FILE_CAPS)
			jw_cstr(w, NULL, "PRIVILEGES_RAISED_EXEC_FILE_CAP");
		if (s & VIGIL_SECEXEC_SETUID_ROOT)
			jw_cstr(w, NULL, "PRIVILEGES_RAISED_EXEC_FILE_SETUID");
		if (s & VIGIL_SECEXEC_SETGID_ROOT)
			jw_cstr(w, NULL, "PRIVILEGES_RAISED_EXEC_FILE_SETGID");
		jw_arr_end(w);
	}
	if (unlinked) {
		f->tmp.len = 0;
		vbuf_put(&f->tmp, file, ex->file_len);
		vbuf_puts(&f->tmp, " (deleted)");
		jw_obj(w, "file");
		jw_obj(w, "inode");
		if (inode_str)
			vigil_tg_u64_str(w, "number", ex->ino);
		else
			jw_u64(w, "number", ex->ino);
		jw_u64(w, "links", ex->nlink);
		jw_end(w);
		jw_str(w, "path", f->tmp.p, f->tmp.len);
		jw_end(w);
	}
	jw_end(w);
}

/* in_init_tree, binary_properties (an exec's own line only: ex, the
 * event), cap and ns (with their options). */
static void process_extras(struct vigil_formatter *f, struct jw *w, const struct vigil_proc_entry *e,
			   const struct vigil_exec *ex, bool inode_str)
{
	jw_bool(w, "in_init_tree", e && (e->flags & VIGIL_PROC_IN_INIT_TREE));
	if (ex)
		binary_properties_json(f, w, ex, inode_str);
	if (!e)
		return;
	if (f->opts.process_cred)
		caps_json(w, "cap", &e->creds);
	if (f->opts.process_ns)
		ns_json(w, &e->creds);
}

/* The fields of a process object; a form lists them in its order, and
 * PF_END (0) ends the list. Those from PF_CWD on come from the cache entry:
 * a process it does not hold has none of them. */
enum process_field {
	PF_END,
	PF_EXEC_ID,
	PF_PID,
	PF_TID,
	PF_PPID,
	PF_UID,			/* the real uid, from the event */
	PF_AUID,
	PF_START_TIME,
	PF_PARENT_EXEC_ID,	/* when the parent is known */
	PF_CGROUP_ID,
	PF_CREDS,		/* process_credentials */
	PF_EXTRAS,		/* in_init_tree, binary_properties, cap, ns */
	PF_FLAGS,		/* the form's word for an unknown process */
	PF_CWD,
	PF_EUID,		/* "uid": the effective uid at exec */
	PF_BINARY,
	PF_ARGS,		/* "arguments", left out when there are none */
	PF_CGROUP,
	PF_DOCKER,		/* the container id the cgroup path names */
	PF_MAX,
};

struct flag_word {
	uint32_t bit;
	const char *word;
};

static const struct flag_word vigil_words[] = {
	{ VIGIL_EXEC_PROCFS, "procFS" },
	{ VIGIL_PROC_CLONE, "clone" },
	{ VIGIL_EXEC_TRUNC_PATH, "truncFilename" },
	{ VIGIL_EXEC_TRUNC_ARGS, "truncArgs" },
	{ VIGIL_EXEC_NO_ARGS, "errorArgs" },
	{ VIGIL_EXEC_NO_CWD, "errorCWD" },
	{ VIGIL_EXEC_TRUNC_CWD, "truncCWD" },
	{ VIGIL_EXEC_ROOT_CWD, "rootcwd" },
	{ VIGIL_EXEC_FILELESS, "fileless" },
	{ VIGIL_EXEC_REDACTED, "redacted" },
};

/* Tetragon's words, in its order. Cut paths (truncFilename, truncCWD)
 * have no word there: Tetragon never writes them. "clone" is an exec's
 * that followed a fork; a process forked and never exec'd is "execve"
 * alone, as Tetragon's process cache has it (a clone keeps its parent's
 * exec flags). */
static const struct flag_word tetragon_words[] = {
	{ VIGIL_EXEC_PROCFS, "procFS" },
	{ VIGIL_EXEC_TRUNC_ARGS, "truncArgs" },
	{ VIGIL_EXEC_NO_ARGS, "errorArgs" },
	{ VIGIL_EXEC_ROOT_CWD, "rootcwd" },
	{ VIGIL_EXEC_NO_CWD, "errorCWD" },
	{ VIGIL_EXEC_CLONE, "clone" },
	{ VIGIL_PROC_IN_INIT_TREE, "inInitTree" },
};

/* argv[1..] as Tetragon's ArgsDecoder joins them (pkg/process): a word
 * with a space is written " \"word\"" (its leading space even when it is
 * the first), any other word is added after a space unless nothing has
 * been written yet (so leading empty words vanish and later ones leave a
 * space); nothing is escaped. */
static void tetragon_args_text(struct vigil_buf *b, const char *args, size_t n)
{
	const char *end = args + n, *a = memchr(args, 0, n);

	b->len = 0;
	if (!a)
		return;
	for (a++; a <= end; ) {
		const char *z = memchr(a, 0, end - a);
		size_t len = z ? (size_t)(z - a) : (size_t)(end - a);

		if (memchr(a, ' ', len)) {
			vbuf_puts(b, " \"");
			vbuf_put(b, a, len);
			vbuf_putc(b, '"');
		} else {
			if (b->len)
				vbuf_putc(b, ' ');
			vbuf_put(b, a, len);
		}
		if (!z)
			break;
		a = z + 1;
	}
}

static const struct process_form {
	enum process_field fields[PF_MAX];
	/* The flags: "execve" unless a bit of not_execve is set, then the
	 * words of the bits set, in the table's order; unknown alone for a
	 * process the cache does not hold. */
	uint32_t not_execve;
	const struct flag_word *words;
	size_t n_words;
	const char *unknown;
	size_t docker_max;	/* characters of the container id kept */
	/* "arguments" from argv (NUL-separated, argv[0] first) */
	void (*args_text)(struct vigil_buf *b, const char *args, size_t n);
	bool inode_str;		/* binary_properties' inode number as a string */
	/* Tetragon's record has no cwd after argv when the cwd is "/" or
	 * unknown, and its decoder then trims trailing empty arguments too. */
	bool args_trim_no_cwd;
} forms[] = {
	[VIGIL_EXPORT_VIGIL] = {
		.fields = { PF_EXEC_ID, PF_PID, PF_TID, PF_PPID, PF_UID, PF_AUID, PF_CREDS,
			    PF_CWD, PF_BINARY, PF_ARGS, PF_FLAGS, PF_START_TIME,
			    PF_PARENT_EXEC_ID, PF_CGROUP_ID, PF_CGROUP, PF_DOCKER, PF_EXTRAS },
		.not_execve = VIGIL_EXEC_PROCFS | VIGIL_PROC_CLONE,
		.words = vigil_words,
		.n_words = N(vigil_words),
		.unknown = "miss",
		.docker_max = VIGIL_CONTAINER_ID_MAX,
		.args_text = vigil_args_text,
	},
	/* Tetragon keeps a container id's first 31 characters. */
	[VIGIL_EXPORT_TETRAGON] = {
		.fields = { PF_EXEC_ID, PF_PID, PF_EUID, PF_CWD, PF_BINARY, PF_ARGS, PF_FLAGS,
			    PF_START_TIME, PF_AUID, PF_DOCKER, PF_PARENT_EXEC_ID, PF_TID,
			    PF_CREDS, PF_EXTRAS },
		.not_execve = VIGIL_EXEC_PROCFS,
		.words = tetragon_words,
		.n_words = N(tetragon_words),
		.unknown = "unknown",
		.docker_max = 31,
		.args_text = tetragon_args_text,
		.inode_str = true,	/* proto3 JSON: a uint64 is a string */
		.args_trim_no_cwd = true,
	},
};

static void flags_text(struct vigil_buf *b, const struct process_form *form,
		       const struct vigil_proc_entry *e)
{
	b->len = 0;
	if (!e) {
		vbuf_puts(b, form->unknown);
		return;
	}
	if (!(e->flags & form->not_execve))
		vbuf_puts(b, "execve");
	for (size_t i = 0; i < form->n_words; i++) {
		if (!(e->flags & form->words[i].bit))
			continue;
		if (b->len)
			vbuf_putc(b, ' ');
		vbuf_puts(b, form->words[i].word);
	}
}

static void process_field(struct vigil_formatter *f, struct jw *w, const struct process_form *form,
			  enum process_field field, const struct vigil_proc *p,
			  const struct vigil_proc_entry *e, const struct vigil_exec *ex)
{
	char id[VIGIL_EXEC_ID_MAX], t[VIGIL_TIME_MAX], cid[VIGIL_CONTAINER_ID_MAX];

	if (field >= PF_CWD && !e)
		return;
	switch (field) {
	case PF_EXEC_ID:
		vigil_exec_id(id, sizeof(id), f->node_name, p->exec_ktime, p->pid);
		jw_cstr(w, "exec_id", id);
		break;
	case PF_PID: jw_u64(w, "pid", p->pid); break;
	case PF_TID: jw_u64(w, "tid", p->tid); break;
	case PF_PPID: jw_u64(w, "ppid", p->ppid); break;
	case PF_UID: jw_u64(w, "uid", p->uid); break;
	case PF_AUID: jw_u64(w, "auid", p->auid); break;
	case PF_START_TIME:
		vigil_rfc3339(t, sizeof(t), p->exec_ktime, f->realtime_offset_ns);
		jw_cstr(w, "start_time", t);
		break;
	case PF_PARENT_EXEC_ID:
		if (p->parent_exec_ktime) {
			vigil_exec_id(id, sizeof(id), f->node_name, p->parent_exec_ktime, p->ppid);
			jw_cstr(w, "parent_exec_id", id);
		}
		break;
	case PF_CGROUP_ID: jw_u64(w, "cgroup_id", p->cgroup_id); break;
	case PF_CREDS: process_creds(f, w, p, e); break;
	case PF_EXTRAS: process_extras(f, w, e, ex, form->inode_str); break;
	case PF_FLAGS:
		flags_text(&f->tmp, form, e);
		jw_str(w, "flags", f->tmp.p, f->tmp.len);
		break;
	case PF_CWD: jw_str(w, "cwd", e->cwd, e->cwd_len); break;
	case PF_EUID: jw_u64(w, "uid", e->creds.euid); break;
	case PF_BINARY: jw_str(w, "binary", e->binary, e->binary_len); break;
	case PF_ARGS: {
		size_t n = e->args_len;

		if (form->args_trim_no_cwd && (e->flags & (VIGIL_EXEC_ROOT_CWD | VIGIL_EXEC_NO_CWD)))
			while (n && !e->args[n - 1])
				n--;
		form->args_text(&f->tmp, e->args, n);
		if (f->tmp.len)
			jw_str(w, "arguments", f->tmp.p, f->tmp.len);
		break;
	}
	case PF_CGROUP: jw_str(w, "cgroup", e->cgroup, e->cgroup_len); break;
	case PF_DOCKER:
		if (vigil_container_id(e->cgroup, e->cgroup_len, cid, sizeof(cid)))
			jw_str(w, "docker", cid, strnlen(cid, form->docker_max));
		break;
	case PF_END: case PF_MAX: break;
	}
}

static void process_object(struct vigil_formatter *f, struct jw *w,
			   enum vigil_export_format form, const char *key,
			   const struct vigil_proc *p, const struct vigil_proc_entry *e,
			   const struct vigil_exec *ex)
{
	const struct process_form *pf = &forms[form];

	jw_obj(w, key);
	for (const enum process_field *i = pf->fields; *i != PF_END; i++)
		process_field(f, w, pf, *i, p, e, ex);
	jw_end(w);
}

/* e's object in form, as written from e alone: from the memo when it
 * holds it, else written into it. Not kept (serial 0) when its buffer
 * grew past VIGIL_PROCESS_MEMO_MAX: the caller uses it once, then frees
 * it. NULL when memory was short (the caller writes the object itself). */
static struct vigil_process_memo *process_memo(struct vigil_formatter *f,
					       enum vigil_export_format form,
					       const struct vigil_proc_entry *e)
{
	/* A second form (a subscriber's) takes the slots half a turn on. */
	struct vigil_process_memo *m =
		&f->memos[(e->serial + form * (VIGIL_PROCESS_MEMOS / 2)) % VIGIL_PROCESS_MEMOS];
	struct jw w;

	if (m->serial == e->serial && m->realtime_offset_ns == f->realtime_offset_ns &&
	    m->opts.format == form && m->opts.process_ns == f->opts.process_ns &&
	    m->opts.process_cred == f->opts.process_cred)
		return m;
	m->serial = 0;
	m->json.len = 0;
	f->tmp.oom = 0;		/* a cut flags or arguments text must not be kept */
	jw_begin(&w, &m->json);
	process_object(f, &w, form, NULL, &e->proc, e, NULL);
	if (m->json.oom || f->tmp.oom) {
		vbuf_free(&m->json);
		return NULL;
	}
	if (m->json.cap > VIGIL_PROCESS_MEMO_MAX)
		return m;	/* used once */
	m->serial = e->serial;
	m->realtime_offset_ns = f->realtime_offset_ns;
	m->opts = (struct vigil_format_opts){ .format = form, .process_ns = f->opts.process_ns,
					      .process_cred = f->opts.process_cred };
	return m;
}

void vigil_json_process_form(struct vigil_formatter *f, struct jw *w,
			     enum vigil_export_format form, const char *key,
			     const struct vigil_proc *p, const struct vigil_proc_entry *e,
			     const struct vigil_exec *ex)
{
	/* Most objects say only what the entry holds: the event's own ids are
	 * the exec's (one thread, same uid, same cgroup). Those are written
	 * once, then copied (a fifth of the agent's CPU under an exec storm,
	 * where each exec writes its own process twice and its parent's).
	 * An entry not in the cache (serial 0: made on the stack) is not. */
	if (f->memo && e && e->serial && !memcmp(p, &e->proc, sizeof(*p)) &&
	    !(ex && has_binary_properties(ex))) {
		struct vigil_process_memo *m = process_memo(f, form, e);

		if (m) {
			jw_raw(w, key, m->json.p, m->json.len);
			if (!m->serial)
				vbuf_free(&m->json);	/* too long to keep */
			return;
		}
	}
	process_object(f, w, form, key, p, e, ex);
}

void vigil_json_parent(struct vigil_formatter *f, struct jw *w, enum vigil_export_format form,
		       const struct vigil_proc *p)
{
	const struct vigil_proc_entry *e;

	if (!p->parent_exec_ktime)
		return;
	e = vigil_proc_cache_find(&f->cache, p->ppid, p->parent_exec_ktime);
	if (e)
		vigil_json_process_form(f, w, form, "parent", &e->proc, e, NULL);
}

void vigil_json_process(struct vigil_formatter *f, struct jw *w, const char *key,
			const struct vigil_proc *p)
{
	vigil_json_process_form(f, w, VIGIL_EXPORT_VIGIL, key, p,
				vigil_proc_cache_find(&f->cache, p->pid, p->exec_ktime), NULL);
}
