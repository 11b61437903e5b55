// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON output of scif-info and scif-bench: one writer of strings,
 * which keeps valid UTF-8 and replaces what is not (json.h).
 */
#include <string.h>

#include "json.h"

/* The bounds of the second byte after lead byte @c (RFC 3629, 4). */
static void second_range(unsigned char c, unsigned char *lo,
			 unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (c == 0xe0)
		*lo = 0xa0;		/* no overlong 3-byte forms */
	else if (c == 0xed)
		*hi = 0x9f;		/* no surrogates */
	else if (c == 0xf0)
		*lo = 0x90;		/* no overlong 4-byte forms */
	else if (c == 0xf4)
		*hi = 0x8f;		/* nothing past U+10FFFF */
}

size_t json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo, hi;
	size_t len, i;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	second_range(s[0], &lo, &hi);
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* One ASCII character, escaped as JSON needs. */
static int put_ascii(unsigned char c, FILE *f)
{
	switch (c) {
	case '"':
		return fputs("\\\"", f);
	case '\\':
		return fputs("\\\\", f);
	case '\n':
		return fputs("\\n", f);
	case '\t':
		return fputs("\\t", f);
	case '\r':
		return fputs("\\r", f);
	}
	if (c < 0x20 || c == 0x7f)
		return fprintf(f, "\\u%04x", c);
	return putc(c, f);
}

int json_fputs(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), len;
	int ret = putc('"', f);

	while (ret >= 0 && n) {
		len = json_utf8_len(p, n);
		if (len == 1)
			ret = put_ascii(*p, f);
		else if (len)
			ret = fwrite(p, 1, len, f) == len ? 0 : -1;
		else
			ret = fputs("\\ufffd", f);
		len = len ? len : 1;
		p += len;
		n -= len;
	}
	return ret < 0 ? ret : putc('"', f);
}
