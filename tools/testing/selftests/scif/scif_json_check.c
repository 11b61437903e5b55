// SPDX-License-Identifier: GPL-2.0
/*
 * scif_json_check: JSON on stdin, for the shell tests (scif_json.h).
 *   scif_json_check               exit 0 if stdin is one valid JSON value
 *   scif_json_check get PATH      print the value at PATH
 *   scif_json_check count PATH    print the length of the array at PATH
 * Exit 1 if the input is not valid JSON or PATH is absent; 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scif_json.h"

int main(int argc, char **argv)
{
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap), val[4096];
	size_t n;
	int count;

	if (!text)
		return 2;
	while ((n = fread(text + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (len + 1 == cap) {
			cap *= 2;
			text = realloc(text, cap);
			if (!text)
				return 2;
		}
	}
	text[len] = '\0';
	if (argc == 1)
		return json_valid(text) ? 0 : 1;
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "get")) {
		if (json_get(text, argv[2], val, sizeof(val)))
			return 1;
		printf("%s\n", val);
		return 0;
	}
	if (!strcmp(argv[1], "count")) {
		count = json_count(text, argv[2]);
		if (count < 0)
			return 1;
		printf("%d\n", count);
		return 0;
	}
	return 2;
}
