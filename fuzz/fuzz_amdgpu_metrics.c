/*
 * libFuzzer: the gpu_metrics table reader, the RAS count parser and the
 * pci.ids lookup on arbitrary input (amdgpu_metrics_parse, amdgpu_ras_parse,
 * amdgpu_pciids_find), then what they promise checked: nothing is read from a
 * table whose layout is not known, every value fits the field it came from,
 * the throttle status maps only onto the clock event reasons gpu_metrics can
 * report, residency counters come only from v1.6, and a name from pci.ids holds no control
 * character.
 */
#include "gpu/amdgpu_metrics.h"
#include "gpu/amdgpu_pciids.h"
#include "gpu/amdgpu_ras.h"
#include "gpu/gpu_reasons.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	amdgpu_metrics m;
	bool known = amdgpu_metrics_parse(data, size, &m);
	if (known != m.known || (known && !m.header_ok) || (m.header_ok != (size >= 4)))
		__builtin_trap();
	for (int k = 0; k < AMDGPU_M__COUNT; k++) {
		/* every field is a u16, except v3.0's socket power: a u32 of mW */
		double top =
		    k == AMDGPU_M_POWER_W && m.format_revision == 3 ? 4294967.295 : 65535.0;
		if (m.ok[k] && (!known || m.v[k] < 0 || m.v[k] > top))
			__builtin_trap();
		if (!m.ok[k] && m.v[k] != 0)
			__builtin_trap();
	}
	if (m.throttle_ok && !known)
		__builtin_trap();
	/* residency counters only from v1.6, and an interval with itself is none */
	if (m.resid.ok && (!known || m.format_revision != 1 || m.content_revision != 6))
		__builtin_trap();
	uint64_t reasons, known_reasons;
	if (amdgpu_residency_reasons(&m.resid, &m.resid, &reasons, &known_reasons) || reasons ||
	    known_reasons)
		__builtin_trap();
	uint64_t can =
	    gpu_reason_bit(GPU_REASON_SW_POWER_CAP) | gpu_reason_bit(GPU_REASON_SW_THERMAL) |
	    gpu_reason_bit(GPU_REASON_HW_THERMAL) | gpu_reason_bit(GPU_REASON_HW_SLOWDOWN);
	if (amdgpu_throttle_reasons(m.throttle_raw) & ~can)
		__builtin_trap();
	uint64_t ue = 0, ce = 0;
	amdgpu_ras_parse((const char *)data, size, &ue, &ce);
	amdgpu_pciids_query q = {0x1002, 0x73bf, 0x1002, 0x0e3a, "", ""};
	bool found = amdgpu_pciids_find((const char *)data, size, &q);
	if (!found && q.device_name[0])
		__builtin_trap();
	for (const char *n = q.device_name; *n; n++)
		if ((unsigned char)*n < 0x20)
			__builtin_trap();
	if (strlen(q.subsystem_name) >= sizeof q.subsystem_name)
		__builtin_trap();
	return 0;
}
