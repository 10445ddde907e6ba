/* libFuzzer: CUDA_VISIBLE_DEVICES values and AER kernel-log lines as the doctor parses them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/check_cuda.h"
#include "doctor/klog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	static const doctor_cvd_gpu gpus[4] = {
	    {"GPU-8f2a1111-aaaa-bbbb-cccc-000000000000", "NVIDIA H100 80GB HBM3",
	     "00000000:1B:00.0", 9.0, 1980, false},
	    {"GPU-8f2b2222-aaaa-bbbb-cccc-000000000001", "NVIDIA A100 80GB PCIe",
	     "00000000:43:00.0", 8.0, 1410, true},
	    {"GPU-1234abcd-aaaa-bbbb-cccc-000000000002", "NVIDIA L4", "00000000:52:00.0", 8.9, 2040,
	     false},
	    {"GPU-99999999-aaaa-bbbb-cccc-000000000003", "NVIDIA L4", "00000000:61:00.0", 0, 0,
	     false},
	};
	doctor_cvd_map m;
	doctor_cvd_resolve(s, gpus, 4, size & 1, &m);
	if (m.n < 0 || m.n > DOCTOR_CVD_MAX)
		abort();
	for (int i = 0; i < m.n; i++)
		if ((m.phys[i] < 0 && m.phys[i] != -2) ||
		    m.phys[i] >= 4) /* -2: MIG, parent unknown */
			abort();
	doctor_aer a;
	doctor_aer_parse(s, &a);
	free(s);
	return 0;
}
