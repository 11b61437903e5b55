/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON output of scif-info and scif-bench: one writer of strings.
 */
#ifndef SCIF_TOOLS_JSON_H
#define SCIF_TOOLS_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * json_fputs() - write @s to @f as a JSON string, in double quotes.
 * Valid UTF-8 is written as it is; a byte that does not begin a valid
 * UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF) is written as U+FFFD; quotes, backslashes and control
 * characters are escaped.  Return: what fputs() and putc() return, a
 * negative value on an error.
 */
int json_fputs(const char *s, FILE *f);

/*
 * json_utf8_len() - the length (1 to 4) of the valid UTF-8 sequence
 * that @s begins, with at most @n bytes there, or 0 if it is not one.
 */
size_t json_utf8_len(const unsigned char *s, size_t n);

#endif
