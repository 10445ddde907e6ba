/*
 * libFuzzer: the amdgpu text parsers on arbitrary input: pp_dpm_* tables, a PCIe
 * link speed, a DRM fdinfo file and a KFD node's properties (amdgpu_parse_dpm,
 * amdgpu_link_gen, amdgpu_parse_fdinfo, amdgpu_parse_kfd_props), then what they promise checked:
 * the current level is one of the levels, a generation is 0..7, a PCI address is in the one
 * spelling.
 */
#include "gpu/amdgpu.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	amdgpu_dpm d;
	if (amdgpu_parse_dpm(buf, size, &d) != (d.levels > 0) ||
	    (d.cur_ok && (d.cur_mhz > d.max_mhz || d.cur_mhz < 0)))
		__builtin_trap();
	/* sysfs files are text: the link speed is read as a C string */
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int g = amdgpu_link_gen(s);
	if (g < 0 || g > 7)
		__builtin_trap();
	amdgpu_kfd_node kn;
	if (amdgpu_parse_kfd_props(s, &kn) &&
	    (strlen(kn.pdev) != 12 || strspn(kn.pdev, "0123456789abcdef:.") != 12))
		__builtin_trap();
	free(s);
	amdgpu_fdinfo f;
	amdgpu_parse_fdinfo(buf, size, &f);
	size_t n = strlen(f.pdev);
	if (n != 0 && (n != 12 || f.pdev[4] != ':' || f.pdev[7] != ':' || f.pdev[10] != '.' ||
	               strspn(f.pdev, "0123456789abcdef:.") != n))
		__builtin_trap();
	amdgpu_client c = {.pid = 1, .info = f};
	amdgpu_proc p[2];
	int np = amdgpu_fold_clients(&c, 1, p, 2);
	if (np < 0 || np > 1 || (np == 1 && p[0].clients != 1))
		__builtin_trap();
	return 0;
}
