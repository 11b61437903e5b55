// SPDX-License-Identifier: GPL-2.0
/*
 * The test of json.c, the tools' JSON string writer (not installed; "make
 * check" here, scripts/test-make.sh in make check).  Each case is a C
 * string and the exact JSON text it must become; prints TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct json_case {
	const char *name;
	const char *in;
	const char *out;
};

static const struct json_case cases[] = {
	{ "ascii", "scif0 node 1", "\"scif0 node 1\"" },
	{ "empty", "", "\"\"" },
	{ "quote_backslash", "a\"b\\c", "\"a\\\"b\\\\c\"" },
	{ "controls", "\n\t\r\x01\x1f\x7f", "\"\\n\\t\\r\\u0001\\u001f\\u007f\"" },
	/* é, €, U+10348 and U+10FFFF: kept as they are. */
	{ "utf8_kept", "\xc3\xa9 \xe2\x82\xac \xf0\x90\x8d\x88 \xf4\x8f\xbf\xbf",
	  "\"\xc3\xa9 \xe2\x82\xac \xf0\x90\x8d\x88 \xf4\x8f\xbf\xbf\"" },
	/* A Latin-1 é (one byte): not UTF-8. */
	{ "latin1_replaced", "caf\xe9", "\"caf\\ufffd\"" },
	{ "lone_continuation", "\x80x", "\"\\ufffdx\"" },
	/* "/" in two bytes, NUL in two bytes: overlong forms. */
	{ "overlong_2", "\xc0\xaf\xc1\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "overlong_3", "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "overlong_4", "\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	/* U+D800, a surrogate; U+110000, past the end. */
	{ "surrogate", "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "past_10ffff", "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "f5_and_ff", "\xf5\xff", "\"\\ufffd\\ufffd\"" },
	/* Cut short by the end of the string, then by an ASCII byte. */
	{ "truncated_end", "ab\xe2\x82", "\"ab\\ufffd\\ufffd\"" },
	{ "truncated_mid", "\xe2\x82z", "\"\\ufffd\\ufffdz\"" },
};

static int run_case(const struct json_case *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ok;

	if (!f)
		return 0;
	ok = json_fputs(c->in, f) >= 0;
	if (fclose(f))
		ok = 0;
	ok = ok && buf && !strcmp(buf, c->out);
	if (!ok)
		printf("# %s: got %s, want %s\n", c->name, buf ? buf : "(none)",
		       c->out);
	free(buf);
	return ok;
}

int main(void)
{
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	int failed = 0;

	printf("1..%zu\n", n);
	for (i = 0; i < n; i++) {
		int ok = run_case(&cases[i]);

		printf("%sok %zu - json_%s\n", ok ? "" : "not ", i + 1,
		       cases[i].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
