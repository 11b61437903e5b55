/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON reader for the tests (RFC 8259 syntax; numbers, strings
 * with escapes, nesting up to 32 levels), so that the tools' JSON output
 * is parsed for real in the busybox guest, which has no JSON tool.
 *
 *   json_valid(text)            1 if @text is exactly one JSON value
 *   json_get(text, path, buf)   the value at @path ("nodes/0/state": a
 *                               key, an array index, a key...) into @buf:
 *                               a string without its quotes (escapes kept
 *                               as written), anything else as written;
 *                               0, or -1 if absent or malformed
 *   json_count(text, path)      elements of the array (or members of the
 *                               object) at @path, or -1
 */
#ifndef SCIF_JSON_H
#define SCIF_JSON_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct json_cur {
	const char *p;
	int depth;
};

static int json_value(struct json_cur *c);

static void json_ws(struct json_cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

static int json_string(struct json_cur *c)
{
	int i;

	if (*c->p != '"')
		return -1;
	for (c->p++; *c->p != '"'; c->p++) {
		if ((unsigned char)*c->p < 0x20)
			return -1;
		if (*c->p != '\\')
			continue;
		c->p++;
		if (*c->p == 'u') {
			for (i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)c->p[i]))
					return -1;
			c->p += 4;
		} else if (!*c->p || !strchr("\"\\/bfnrt", *c->p)) {
			return -1;
		}
	}
	c->p++;
	return 0;
}

static int json_digits(struct json_cur *c)
{
	if (!isdigit((unsigned char)*c->p))
		return -1;
	while (isdigit((unsigned char)*c->p))
		c->p++;
	return 0;
}

static int json_number(struct json_cur *c)
{
	if (*c->p == '-')
		c->p++;
	if (*c->p == '0')
		c->p++;
	else if (json_digits(c))
		return -1;
	if (*c->p == '.') {
		c->p++;
		if (json_digits(c))
			return -1;
	}
	if (*c->p == 'e' || *c->p == 'E') {
		c->p++;
		if (*c->p == '+' || *c->p == '-')
			c->p++;
		if (json_digits(c))
			return -1;
	}
	return 0;
}

/* An object or array: members (with keys for an object) separated by ','. */
static int json_container(struct json_cur *c, char close, int keys)
{
	if (++c->depth > 32)
		return -1;
	c->p++;
	json_ws(c);
	if (*c->p == close) {
		c->p++;
		c->depth--;
		return 0;
	}
	for (;;) {
		if (keys) {
			if (json_string(c))
				return -1;
			json_ws(c);
			if (*c->p++ != ':')
				return -1;
		}
		if (json_value(c))
			return -1;
		json_ws(c);
		if (*c->p == close)
			break;
		if (*c->p++ != ',')
			return -1;
		json_ws(c);
	}
	c->p++;
	c->depth--;
	return 0;
}

static int json_value(struct json_cur *c)
{
	json_ws(c);
	switch (*c->p) {
	case '{':
		return json_container(c, '}', 1);
	case '[':
		return json_container(c, ']', 0);
	case '"':
		return json_string(c);
	case 't':
		return strncmp(c->p, "true", 4) ? -1 : (c->p += 4, 0);
	case 'f':
		return strncmp(c->p, "false", 5) ? -1 : (c->p += 5, 0);
	case 'n':
		return strncmp(c->p, "null", 4) ? -1 : (c->p += 4, 0);
	default:
		return json_number(c);
	}
}

static int json_valid(const char *text)
{
	struct json_cur c = { text, 0 };

	if (json_value(&c))
		return 0;
	json_ws(&c);
	return !*c.p;
}

/*
 * Move @c (at a value) to the member @key (or element @key as a number)
 * of that object or array: 0, or -1.
 */
static int json_step(struct json_cur *c, const char *key, size_t klen)
{
	int obj, match, idx = 0, want = atoi(key);
	const char *k;

	json_ws(c);
	obj = *c->p == '{';
	if (*c->p != '{' && *c->p != '[')
		return -1;
	c->p++;
	json_ws(c);
	while (*c->p && *c->p != '}' && *c->p != ']') {
		if (obj) {
			k = c->p + 1;
			if (json_string(c))
				return -1;
			match = (size_t)(c->p - 1 - k) == klen &&
				!strncmp(k, key, klen);
			json_ws(c);
			if (*c->p++ != ':')
				return -1;
			json_ws(c);
			if (match)
				return 0;
		} else if (idx++ == want) {
			return 0;
		}
		if (json_value(c))
			return -1;
		json_ws(c);
		if (*c->p == ',')
			c->p++;
		json_ws(c);
	}
	return -1;
}

/* @c at the value named by @path; 0 or -1. */
static int json_find(struct json_cur *c, const char *path)
{
	size_t len;

	if (!json_valid(c->p))
		return -1;
	while (*path) {
		len = strcspn(path, "/");
		if (json_step(c, path, len))
			return -1;
		path += len;
		if (*path == '/')
			path++;
	}
	json_ws(c);
	return 0;
}

static int json_get(const char *text, const char *path, char *buf,
		    size_t size)
{
	struct json_cur c = { text, 0 };
	const char *start;
	size_t len;

	if (json_find(&c, path))
		return -1;
	start = c.p;
	if (json_value(&c))
		return -1;
	len = c.p - start;
	if (*start == '"') {
		start++;
		len -= 2;
	}
	if (len >= size)
		return -1;
	memcpy(buf, start, len);
	buf[len] = '\0';
	return 0;
}

static int json_count(const char *text, const char *path)
{
	struct json_cur c = { text, 0 };
	char close;
	int n = 0;

	if (json_find(&c, path) || (*c.p != '[' && *c.p != '{'))
		return -1;
	close = *c.p == '[' ? ']' : '}';
	c.p++;
	json_ws(&c);
	while (*c.p != close) {
		if (close == '}') {
			if (json_string(&c))
				return -1;
			json_ws(&c);
			c.p++;	/* ':' */
		}
		if (json_value(&c))
			return -1;
		n++;
		json_ws(&c);
		if (*c.p == ',')
			c.p++;
		json_ws(&c);
	}
	return n;
}

#endif /* SCIF_JSON_H */
