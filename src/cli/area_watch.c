/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The resident's watch over the mounted areas (area_watch.h).  Steps of
 * one look: 1. take a configuration handed over since the last look;
 * 2. every 2 s, list the areas again (records, mount table): areas set up
 * or torn down since; 3. statvfs each mounted area; 4. grow those with
 * grow = yes that need it, within memory-reserve; 5. name the limit of an
 * area that is full, once until it is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "area_watch.h"
#include "area/area.h"
#include "plan/area_grow.h"
#include "shared/sysinfo.h"
#include "shared/units.h"
#include "shared/util.h"
#include "world/load.h"

#define REFRESH_USEC (2ULL * 1000000ULL)

/* What the watch keeps of one area between two looks. */
struct watched {
	char *dir; /* where it is mounted privately (owned); NULL: not watched */
	dev_t dev; /* st_dev of @dir's mount when listed */
	struct grow_sample prev; /* the last sample, for the rate */
	bool full_said, barred_said, failed_said;
};

struct watcher {
	struct area_watch *w;
	struct config cfg; /* the configuration in use */
	bool have_cfg;
	struct area_status *areas; /* area_status_list(), measured again at each look */
	struct watched *x; /* parallel to @areas */
	size_t n;
	uint64_t refresh_at; /* CLOCK_MONOTONIC µs */
	struct sysinfo_memory mem;
};

static void watched_free(struct watched *x, size_t n)
{
	for (size_t i = 0; x && i < n; i++)
		free(x[i].dir);
	free(x);
}

static void tell_main(const struct area_watch *w)
{
	uint64_t one = 1;

	if (w->event_fd >= 0 && write(w->event_fd, &one, sizeof(one)) < 0)
		return; /* a count already pending says the same */
}

/* The configuration as it is now (which areas grow, memory-reserve); one
 * that cannot be read leaves the last one in use (the pass reports its
 * errors). */
static void load_config(struct watcher *t)
{
	struct diag_list dl = { 0 };
	struct config c;

	if (config_init(&c) < 0)
		return;
	if (world_load_settings(t->w->config_path, &c, &dl) < 0) {
		config_done(&c);
	} else {
		if (t->have_cfg)
			config_done(&t->cfg);
		t->cfg = c;
		t->have_cfg = true;
		t->refresh_at = 0; /* grow = yes may have changed */
	}
	diag_list_done(&dl);
}

static const struct watched *find_old(const struct watcher *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (streq(t->areas[i].name, name))
			return &t->x[i];
	return NULL;
}

/* 2.  Returns: 0 or negative errno (the old list stays). */
static int refresh(struct watcher *t)
{
	struct area_status *v = NULL;
	struct watched *x;
	size_t n = 0;
	int r = area_status_list(t->w->state_dir, log_self(&t->w->lg), false, &v, &n);

	if (r < 0)
		return r;
	x = calloc(n ? n : 1, sizeof(*x));
	if (!x) {
		area_status_free(v, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct watched *old = find_old(t, v[i].name);
		char *lower = NULL;
		struct stat st;

		if (old) {
			x[i] = *old;
			x[i].dir = NULL;
		}
		if (v[i].state != AREA_STATE_ACTIVE || !v[i].measured ||
		    area_private_mounts(t->w->state_dir, v[i].name, &x[i].dir, &lower) < 0)
			continue;
		free(lower);
		if (stat(x[i].dir, &st) == 0)
			x[i].dev = st.st_dev;
	}
	if (t->have_cfg)
		area_grow_fill(v, n, &t->cfg, t->mem.available, t->mem.total);
	area_status_free(t->areas, t->n);
	watched_free(t->x, t->n);
	t->areas = v;
	t->x = x;
	t->n = n;
	return 0;
}

/* 3.  Returns: 0; -ESTALE when the area is no longer mounted there. */
static int measure(struct area_status *a, const struct watched *x)
{
	struct statvfs v;
	struct stat st;

	if (!x->dir || stat(x->dir, &st) < 0 || st.st_dev != x->dev || statvfs(x->dir, &v) < 0)
		return -ESTALE;
	area_status_measure(a, &v);
	return 0;
}

static const char *reserve_words(const struct config *c, char *buf, size_t len)
{
	if (c->memory_reserve.kind == AREA_SIZE_PERCENT)
		snprintf(buf, len, "%" PRIu64 "%%", c->memory_reserve.value);
	else
		units_format_size(c->memory_reserve.value, buf, len);
	return buf;
}

static const struct area_config *config_of(const struct watcher *t, const char *name)
{
	for (size_t i = 0; t->have_cfg && i < t->cfg.n_areas; i++)
		if (streq(t->cfg.areas[i].name, name) && !t->cfg.areas[i].refused)
			return &t->cfg.areas[i];
	return NULL;
}

/* Memory as people read it: "4.7G", "830.2M" (/proc/meminfo's figures
 * are exact only in kB, which units_format_size() would print). */
static const char *approx_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes;
	size_t k = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return buf;
	}
	for (v /= 1024.0; v >= 1024.0 && k + 1 < sizeof(units) - 1; k++)
		v /= 1024.0;
	snprintf(buf, len, "%.1f%c", v, units[k]);
	return buf;
}

/* "memory-reserve = 20% keeps 4.7G of MemAvailable (5.1G) for the rest
 * of the system" */
static const char *memory_words(const struct watcher *t, char *buf, size_t len)
{
	char res[32], kept[16], avail[16];

	snprintf(buf, len, "memory-reserve = %s keeps %s of MemAvailable (%s) for the rest of the system",
		 reserve_words(&t->cfg, res, sizeof(res)),
		 approx_size(config_memory_reserve(&t->cfg, t->mem.total), kept, sizeof(kept)),
		 approx_size(t->mem.available, avail, sizeof(avail)));
	return buf;
}

static void log_grown(const struct watcher *t, const struct area_status *a, uint64_t old_size,
		      uint64_t old_inodes)
{
	char size[16], was[16], start[16], ceiling[16];

	log_info(&t->w->lg,
		 "area %s: grown to %s and %" PRIu64 " inodes (from %s and %" PRIu64 "; started at %s and %" PRIu64 "; ceiling now %s and %" PRIu64 " inodes)",
		 a->name, units_format_size_human(a->size_bytes, size, sizeof(size)), a->inodes_total,
		 units_format_size_human(old_size, was, sizeof(was)), old_inodes,
		 units_format_size_human(a->start_size_bytes, start, sizeof(start)), a->start_inodes,
		 units_format_size_human(a->ceiling_bytes, ceiling, sizeof(ceiling)), a->ceiling_inodes);
}

/* The remount of 4, and what it tells.  @full: the area was full before
 * it (words as area_status_full_words()), or NULL. */
static void grow_to(struct watcher *t, size_t i, const struct grow_step *g, const char *full)
{
	struct area_status *a = &t->areas[i];
	struct watched *x = &t->x[i];
	uint64_t old_size = a->size_bytes, old_inodes = a->inodes_total;
	char size[16];
	int r = area_grow_remount(x->dir, x->dev, g->size, g->inodes);

	if (r < 0) {
		if (!x->failed_said && r != -ESTALE)
			log_error(&t->w->lg, "area %s: cannot raise its limits to size=%s, nr_inodes=%" PRIu64 " on '%s': %s",
				  a->name, units_format_size(g->size, size, sizeof(size)), g->inodes, x->dir,
				  strerror(-r));
		x->failed_said = true;
		return;
	}
	x->failed_said = x->barred_said = false;
	if (measure(a, x) < 0)
		return;
	log_grown(t, a, old_size, old_inodes);
	/* the look before saw it full: a writer may have met the limit */
	if (full)
		log_warning(&t->w->lg,
			    "area %s: was %s before it grew: writers may have seen 'No space left on device'; it fills faster than storaged looks (every %llu ms): start it larger (size =, inodes =)",
			    a->name, full, (unsigned long long)(AREA_WATCH_GROW_USEC / 1000));
	tell_main(t->w);
}

/* 4. */
static void grow_one(struct watcher *t, size_t i, uint64_t now)
{
	struct area_status *a = &t->areas[i];
	struct watched *x = &t->x[i];
	struct grow_sample s = { .size = a->size_bytes,
				 .used = a->used_bytes,
				 .inodes = a->inodes_total,
				 .inodes_used = a->inodes_used,
				 .usec = now };
	struct grow_budget b;
	struct grow_step g;
	char full[128], mem[256], size[16];
	const char *was_full;

	area_grow_budget(t->areas, t->n, i, t->mem.available, config_memory_reserve(&t->cfg, t->mem.total), &b);
	area_grow_decide(x->prev.usec ? &x->prev : NULL, &s, &b, &g);
	x->prev = s;
	a->ceiling_bytes = g.ceiling_size;
	a->ceiling_inodes = g.ceiling_inodes;
	was_full = area_status_full_words(a, full, sizeof(full), NULL);
	if (g.grow)
		grow_to(t, i, &g, was_full);
	if (g.barred && !x->barred_said) {
		log_warning(&t->w->lg, "area %s: cannot grow beyond size=%s, nr_inodes=%" PRIu64 ": %s",
			    a->name, units_format_size(g.size, size, sizeof(size)), g.inodes,
			    memory_words(t, mem, sizeof(mem)));
		x->barred_said = true;
	}
}

/* What the administrator changes for a full area (5). */
static void full_advice(const struct watcher *t, const struct area_status *a, const char *limit, char *buf,
			size_t len)
{
	const struct area_config *c = config_of(t, a->name);
	const char *keys = streq(limit, "bytes") ? "size=" : streq(limit, "inodes") ? "inodes=" : "size= and inodes=";
	const char *self = log_self(&t->w->lg);
	char mem[256];

	if (a->grow)
		snprintf(buf, len,
			 "it cannot grow further: %s; lower memory-reserve in [storaged] and reload (SIGHUP), or free memory: it grows as soon as memory allows",
			 memory_words(t, mem, sizeof(mem)));
	else if (c && streq(a->backend, "tmpfs"))
		snprintf(buf, len, "raise %s in [area %s] (%s:%u), or set grow = yes there, then `%s stop` and `%s start`",
			 keys, a->name, c->file ? c->file : "storaged.conf", c->line, self, self);
	else if (c)
		snprintf(buf, len, "raise %s in [area %s] (%s:%u), then `%s stop` and `%s start`", keys, a->name,
			 c->file ? c->file : "storaged.conf", c->line, self, self);
	else
		snprintf(buf, len, "raise %s in its [area] section, then `%s stop` and `%s start`", keys, self, self);
}

/* 5. */
static void notice_full(struct watcher *t, size_t i)
{
	const struct area_status *a = &t->areas[i];
	struct watched *x = &t->x[i];
	char words[128], advice[512];
	const char *limit;

	if (!area_status_full_words(a, words, sizeof(words), &limit)) {
		x->full_said = false;
		return;
	}
	if (x->full_said)
		return;
	x->full_said = true;
	full_advice(t, a, limit, advice, sizeof(advice));
	log_warning(&t->w->lg, "area %s: %s: writers see 'No space left on device'; %s", a->name, words, advice);
	tell_main(t->w);
}

/* One look (3 to 5).  Returns: true when an area may grow. */
static bool look(struct watcher *t)
{
	bool any_grow = false;

	for (size_t i = 0; i < t->n; i++)
		any_grow |= t->areas[i].grow;
	if (any_grow && sysinfo_memory(NULL, &t->mem) < 0)
		any_grow = false; /* no /proc/meminfo: no room known, no growth */
	for (size_t i = 0; i < t->n; i++) {
		if (measure(&t->areas[i], &t->x[i]) < 0)
			continue;
		if (t->areas[i].grow && any_grow)
			grow_one(t, i, now_monotonic_usec());
		notice_full(t, i);
	}
	return any_grow;
}

/* Whether the resident asked for the configuration to be read again
 * (a byte on @fd), or is gone (end of file): false to leave. */
static bool resident_says(struct watcher *t, int fd)
{
	char buf[64];
	ssize_t k = read(fd, buf, sizeof(buf));

	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	if (k > 0)
		load_config(t);
	return true;
}

static _Noreturn void watch_main(struct area_watch *w, int cmd_fd)
{
	struct watcher t = { .w = w };
	bool grow = false;

	sysinfo_memory(NULL, &t.mem);
	load_config(&t);
	for (;;) {
		struct pollfd p = { .fd = cmd_fd, .events = POLLIN };
		uint64_t now = now_monotonic_usec();

		if (t.have_cfg && now >= t.refresh_at) {
			refresh(&t); /* a failure keeps the last list: tried again */
			t.refresh_at = now + REFRESH_USEC;
		}
		if (t.have_cfg)
			grow = look(&t);
		if (poll(&p, 1, (int)((grow ? AREA_WATCH_GROW_USEC : AREA_WATCH_IDLE_USEC) / 1000)) > 0 &&
		    !resident_says(&t, cmd_fd))
			break;
	}
	_exit(0);
}

/* The child keeps stdin/stdout/stderr (the resident's log), the read end
 * of its command pipe and the event counter: never the resident's locks,
 * monitor or signalfd, which must not outlive it. */
static _Noreturn void child_main(struct area_watch *w, int cmd_fd, pid_t parent)
{
	sigset_t none;

	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	/* the resident blocks SIGTERM/SIGINT for its signalfd: not here */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	closelog(); /* syslog(3) connects again at the next message */
	if (dup2(cmd_fd, 3) < 0 || dup2(w->event_fd, 4) < 0 ||
	    (w->lg.target == LOG_TARGET_KMSG && w->lg.kmsg_fd >= 0 && dup2(w->lg.kmsg_fd, 5) < 0))
		_exit(1);
	w->event_fd = 4;
	if (w->lg.target == LOG_TARGET_KMSG && w->lg.kmsg_fd >= 0)
		w->lg.kmsg_fd = 5;
	close_range(w->lg.target == LOG_TARGET_KMSG ? 6 : 5, ~0U, 0);
	watch_main(w, 3);
}

int area_watch_init(struct area_watch *w)
{
	*w = (struct area_watch){ .cmd_fd = -EBADF, .pid = -1 };
	w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return w->event_fd < 0 ? -errno : 0;
}

static int watch_start(struct area_watch *w, const struct options *o, const struct logger *lg)
{
	int p[2];
	pid_t parent = getpid();

	w->lg = *lg;
	w->state_dir = strdup(o->state_dir);
	w->config_path = strdup(o->config_path);
	if (!w->state_dir || !w->config_path)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		safe_close(p[0]);
		safe_close(p[1]);
		return -errno;
	}
	if (w->pid == 0) {
		close(p[1]);
		child_main(w, p[0], parent);
	}
	close(p[0]);
	w->cmd_fd = p[1];
	return fcntl(w->cmd_fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
}

int area_watch_update(struct area_watch *w, const struct options *o, const struct logger *lg)
{
	int r;

	/* a byte already pending asks the same: EAGAIN is no error */
	if (w->pid > 0)
		return write(w->cmd_fd, "r", 1) < 0 && errno != EAGAIN ? -errno : 0;
	r = watch_start(w, o, lg);
	if (r < 0)
		log_error(lg, "cannot watch the areas (grow = yes, full areas): %s", strerror(-r));
	return r;
}

void area_watch_done(struct area_watch *w)
{
	/* the end of its pipe tells the child to leave, at once */
	w->cmd_fd = safe_close(w->cmd_fd);
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	w->pid = -1;
	w->event_fd = safe_close(w->event_fd);
	free(w->state_dir);
	free(w->config_path);
	w->state_dir = w->config_path = NULL;
}
