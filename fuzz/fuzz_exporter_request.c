/*
 * fuzz_exporter_request.c - what the exporter parses from a request: the
 * Accept-Encoding header and the route (method, path), plus the --listen
 * value and label escaping, on arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/buf.h"
#include "exporter/http.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	exporter_accepts_gzip(s);
	/* Split at the first space into method and path, as a request line. */
	char *sp = strchr(s, ' ');
	if (sp) {
		*sp = '\0';
		exporter_route r = exporter_route_request(s, sp + 1);
		if (r == EXPORTER_ROUTE_METRICS && strcmp(sp + 1, "/metrics"))
			__builtin_trap();
		*sp = ' ';
	}
	exporter_listen_addr a;
	if (exporter_parse_listen(s, &a, NULL) == 0 && (a.port < 0 || a.port > 65535))
		__builtin_trap();
	/* Escaped label values never contain a raw newline or an unescaped quote. */
	exporter_buf b = {0};
	exporter_buf_label_value(&b, s);
	for (size_t i = 0; b.p && i < b.len; i++) {
		if (b.p[i] == '\n')
			__builtin_trap();
		if (b.p[i] == '\\')
			i++;
		else if (b.p[i] == '"')
			__builtin_trap();
	}
	gw_sb_free(&b);
	free(s);
	return 0;
}
