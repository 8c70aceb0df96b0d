/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "diag.h"

static int diag_vadd(struct diag_list *dl, enum diag_level level, const char *file, unsigned line,
		     const char *fmt, va_list ap)
{
	struct diag d = { .level = level, .line = line };
	struct diag *nv;

	if (vasprintf(&d.msg, fmt, ap) < 0)
		return -ENOMEM;
	if (file && !(d.file = strdup(file)))
		goto fail;
	nv = realloc(dl->v, (dl->n + 1) * sizeof(*nv));
	if (!nv)
		goto fail;
	nv[dl->n++] = d;
	dl->v = nv;
	return 0;
fail:
	free(d.file);
	free(d.msg);
	return -ENOMEM;
}

int diag_add(struct diag_list *dl, enum diag_level level, const char *file, unsigned line,
	     const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = diag_vadd(dl, level, file, line, fmt, ap);
	va_end(ap);
	return r;
}

int diag_errno(struct diag_list *dl, int r, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int q;

	va_start(ap, fmt);
	q = diag_vadd(dl, DIAG_ERROR, file, line, fmt, ap);
	va_end(ap);
	return q < 0 ? q : r;
}

size_t diag_count(const struct diag_list *dl, enum diag_level level)
{
	size_t n = 0;

	for (size_t i = 0; i < dl->n; i++)
		n += dl->v[i].level == level;
	return n;
}

void diag_print(const struct diag_list *dl, FILE *out)
{
	for (size_t i = 0; i < dl->n; i++) {
		const struct diag *d = &dl->v[i];
		const char *what = d->level == DIAG_ERROR ? "error" : d->level == DIAG_WARNING ? "warning" : "info";

		if (d->file && d->line)
			fprintf(out, "%s:%u: %s: %s\n", d->file, d->line, what, d->msg);
		else if (d->file)
			fprintf(out, "%s: %s: %s\n", d->file, what, d->msg);
		else
			fprintf(out, "storaged: %s: %s\n", what, d->msg);
	}
}

void diag_list_done(struct diag_list *dl)
{
	for (size_t i = 0; i < dl->n; i++) {
		free(dl->v[i].file);
		free(dl->v[i].msg);
	}
	free(dl->v);
	dl->v = NULL;
	dl->n = 0;
}

int diag_move(struct diag_list *to, struct diag_list *from)
{
	struct diag *v;

	if (!from->n)
		return 0;
	v = reallocarray(to->v, to->n + from->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v + to->n, from->v, from->n * sizeof(*v));
	to->v = v;
	to->n += from->n;
	free(from->v);
	*from = (struct diag_list){ 0 };
	return 0;
}

void diag_drop_warnings(struct diag_list *dl, size_t from)
{
	size_t k = from;

	for (size_t i = from; i < dl->n; i++) {
		if (dl->v[i].level == DIAG_ERROR) {
			dl->v[k++] = dl->v[i];
			continue;
		}
		free(dl->v[i].file);
		free(dl->v[i].msg);
	}
	dl->n = k;
}
