/* pyprobe.c - ask a Python interpreter, in child processes with a timeout, which GPU stacks it has.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor_int.h"
#include "util/child.h"

#define PY_OUT_CAP (1u << 20)
#define PY_MARK "@@GPUWHY@@"

static const char *const py_names[DOCTOR_PY_NPKG] = {"torch", "jax", "tensorflow", "onnxruntime",
                                                     "cupy"};

/*
 * The probe. `list` finds the packages without importing them (cheap);
 * `NAME` imports one and reports version, the CUDA it was built for and the
 * GPUs it sees. The answer is one JSON line after a marker, because the
 * frameworks print their own chatter on stdout.
 */
static const char py_script[] =
    "import sys, os, json\n"
    "M = '" PY_MARK "'\n"
    "def out(o):\n"
    "    sys.stdout.write('\\n' + M + json.dumps(o) + '\\n')\n"
    "    sys.stdout.flush()\n"
    "def err(e):\n"
    "    return ('%s: %s' % (type(e).__name__, e)).strip()[:400]\n"
    "def dists():\n"
    "    try:\n"
    "        from importlib import metadata as md\n"
    "        return list(md.distributions())\n"
    "    except Exception:\n"
    "        return []\n"
    "def dname(d):\n"
    "    try:\n"
    "        return (d.metadata['Name'] or '').lower().replace('_', '-')\n"
    "    except Exception:\n"
    "        return ''\n"
    "def cuda_str(v):\n"
    "    return '%d.%d' % (v // 1000, (v % 1000) // 10)\n"
    "def uuid_str(u):\n"
    "    s = str(u)\n"
    "    if s.startswith('UUID('):\n"
    "        s = s[6:-2]\n"
    "    return s if s.startswith(('GPU-', 'MIG-')) else 'GPU-' + s\n"
    "def p_torch(r):\n"
    "    import torch\n"
    "    r['version'] = torch.__version__; r['file'] = torch.__file__\n"
    "    r['cuda'] = torch.version.cuda\n"
    "    hip = getattr(torch.version, 'hip', None)\n"
    "    if hip: r['other_gpu'] = 'ROCm ' + str(hip)\n"
    "    r['cpu_only'] = not torch.version.cuda and not hip\n"
    "    if r['cpu_only']:\n"
    "        r['gpu_count'] = 0; return\n"
    "    n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
    "    r['gpu_count'] = n; r['devices'] = []\n"
    "    for i in range(min(n, 16)):\n"
    "        p = torch.cuda.get_device_properties(i)\n"
    "        d = {'name': p.name}\n"
    "        u = getattr(p, 'uuid', None)\n"
    "        if u is not None: d['uuid'] = uuid_str(u)\n"
    "        r['devices'].append(d)\n"
    "def p_jax(r):\n"
    "    import jax\n"
    "    r['version'] = jax.__version__; r['file'] = jax.__file__\n"
    "    cuda = None\n"
    "    try:\n"
    "        from jax._src.lib import cuda_versions\n"
    "        if cuda_versions is not None: cuda = "
    "cuda_str(cuda_versions.cuda_runtime_get_version())\n"
    "    except Exception:\n"
    "        pass\n"
    "    rocm = False\n"
    "    for d in dists():\n"
    "        n = dname(d)\n"
    "        if cuda is None and n.startswith('jax-cuda') and n.endswith('-plugin'):\n"
    "            cuda = n[len('jax-cuda'):-len('-plugin')]\n"
    "        if n.startswith('jax-rocm'): rocm = True\n"
    "    try:\n"
    "        import jaxlib\n"
    "        v = getattr(jaxlib, '__version__', '')\n"
    "        if cuda is None and '+cuda' in v: cuda = v.split('+cuda')[1].split('.')[0]\n"
    "    except Exception:\n"
    "        pass\n"
    "    r['cuda'] = cuda\n"
    "    if rocm: r['other_gpu'] = 'ROCm'\n"
    "    try:\n"
    "        devs = jax.devices('gpu')\n"
    "    except Exception as e:\n"
    "        devs = []\n"
    "        if cuda: r['error'] = err(e)\n"
    "    r['gpu_count'] = len(devs)\n"
    "    r['devices'] = [{'name': getattr(d, 'device_kind', str(d))} for d in devs[:16]]\n"
    "    r['cpu_only'] = cuda is None and not rocm and not devs\n"
    "def p_tensorflow(r):\n"
    "    import tensorflow as tf\n"
    "    r['version'] = tf.__version__; r['file'] = tf.__file__\n"
    "    bi = {}\n"
    "    try: bi = dict(tf.sysconfig.get_build_info())\n"
    "    except Exception: pass\n"
    "    r['cuda'] = bi.get('cuda_version')\n"
    "    if bi.get('is_rocm_build'): r['other_gpu'] = 'ROCm'\n"
    "    r['cpu_only'] = not bi.get('is_cuda_build', False) and not bi.get('is_rocm_build', "
    "False)\n"
    "    gpus = tf.config.list_physical_devices('GPU')\n"
    "    r['gpu_count'] = len(gpus); r['devices'] = []\n"
    "    for g in gpus[:16]:\n"
    "        n = g.name\n"
    "        try: n = tf.config.experimental.get_device_details(g).get('device_name', n)\n"
    "        except Exception: pass\n"
    "        r['devices'].append({'name': n})\n"
    "def p_onnxruntime(r):\n"
    "    import onnxruntime as ort\n"
    "    r['version'] = ort.__version__; r['file'] = ort.__file__\n"
    "    prov = list(ort.get_available_providers())\n"
    "    r['extra'] = 'providers: ' + ', '.join(prov)\n"
    "    try:\n"
    "        from onnxruntime.capi import build_and_package_info as b\n"
    "        r['cuda'] = getattr(b, 'cuda_version', None) or None\n"
    "    except Exception:\n"
    "        pass\n"
    "    gpu = [p for p in prov if p in ('CUDAExecutionProvider', 'TensorrtExecutionProvider')]\n"
    "    rocm = [p for p in prov if p in ('ROCMExecutionProvider', 'MIGraphXExecutionProvider')]\n"
    "    if rocm: r['other_gpu'] = 'ROCm'\n"
    "    r['cpu_only'] = not gpu and not rocm\n"
    "    r['gpu_count'] = -1\n"
    "    if 'CUDAExecutionProvider' in prov:\n"
    "        import ctypes\n"
    "        capi = os.path.join(os.path.dirname(ort.__file__), 'capi')\n"
    "        so = os.path.join(capi, 'libonnxruntime_providers_cuda.so')\n"
    "        if os.path.exists(so):\n"
    "            try:\n"
    "                sh = os.path.join(capi, 'libonnxruntime_providers_shared.so')\n"
    "                if os.path.exists(sh): ctypes.CDLL(sh, mode=ctypes.RTLD_GLOBAL)\n"
    "                ctypes.CDLL(so)\n"
    "                r['extra'] += '; CUDA provider library loads'\n"
    "            except OSError as e:\n"
    "                r['error'] = 'CUDA provider cannot load: ' + str(e)[:300]\n"
    "def p_cupy(r):\n"
    "    import cupy\n"
    "    r['version'] = cupy.__version__; r['file'] = cupy.__file__\n"
    "    rt = cupy.cuda.runtime\n"
    "    if getattr(rt, 'is_hip', False): r['other_gpu'] = 'ROCm'\n"
    "    r['cpu_only'] = False\n"
    "    try:\n"
    "        if not getattr(rt, 'is_hip', False): r['cuda'] = cuda_str(rt.runtimeGetVersion())\n"
    "    except Exception as e:\n"
    "        r['error'] = err(e)\n"
    "    try:\n"
    "        n = rt.getDeviceCount()\n"
    "    except Exception as e:\n"
    "        n = 0; r['error'] = err(e)\n"
    "    r['gpu_count'] = n; r['devices'] = []\n"
    "    for i in range(min(n, 16)):\n"
    "        p = rt.getDeviceProperties(i)\n"
    "        nm = p.get('name', b'')\n"
    "        d = {'name': nm.decode() if isinstance(nm, bytes) else str(nm)}\n"
    "        u = p.get('uuid')\n"
    "        if isinstance(u, bytes) and len(u) == 16:\n"
    "            h = ''.join('%02x' % c for c in bytearray(u))\n"
    "            d['uuid'] = 'GPU-%s-%s-%s-%s-%s' % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])\n"
    "        r['devices'].append(d)\n"
    "mode = sys.argv[1] if len(sys.argv) > 1 else 'list'\n"
    "if mode == 'list':\n"
    "    import importlib.util as iu\n"
    "    r = {'python': '%d.%d.%d' % tuple(sys.version_info[:3]), 'executable': sys.executable,\n"
    "         'venv': sys.prefix != getattr(sys, 'base_prefix', sys.prefix), 'modules': {}, "
    "'dists': []}\n"
    "    for m in ('torch', 'jax', 'tensorflow', 'onnxruntime', 'cupy'):\n"
    "        try:\n"
    "            s = iu.find_spec(m)\n"
    "            r['modules'][m] = (s.origin or (list(s.submodule_search_locations or []) + "
    "[''])[0]) if s else None\n"
    "        except Exception:\n"
    "            r['modules'][m] = None\n"
    "    for d in dists():\n"
    "        n = dname(d)\n"
    "        if n.startswith(('torch', 'jax', 'tensorflow', 'tf-nightly', 'onnxruntime', "
    "'ort-nightly', 'cupy')):\n"
    "            loc = ''\n"
    "            try: loc = str(d.locate_file(''))\n"
    "            except Exception: pass\n"
    "            r['dists'].append({'name': n, 'version': d.version or '', 'location': loc})\n"
    "    out(r)\n"
    "else:\n"
    "    import warnings\n"
    "    r = {'name': mode}\n"
    "    with warnings.catch_warnings(record=True) as w:\n"
    "        warnings.simplefilter('always')\n"
    "        try:\n"
    "            globals()['p_' + mode](r)\n"
    "        except BaseException as e:\n"
    "            r['error'] = err(e)\n"
    "    for x in w:\n"
    "        t = str(x.message)\n"
    "        if 'CUDA' in t or 'driver' in t or 'GPU' in t:\n"
    "            r['warning'] = t.strip()[:400]\n"
    "            break\n"
    "    out(r)\n";

const char *doctor_python_script(void)
{
	return py_script;
}

static void copy_str(json_t *o, const char *key, char *out, size_t len)
{
	json_t *v = json_object_get(o, key);
	if (json_is_string(v))
		snprintf(out, len, "%s", json_string_value(v));
}

/* The JSON after the last marker line of a child's stdout, or NULL. */
static json_t *answer(const gw_child_result *res)
{
	if (!res->out)
		return NULL;
	const char *last = NULL;
	for (const char *p = strstr(res->out, PY_MARK); p; p = strstr(p + 1, PY_MARK))
		last = p;
	if (!last)
		return NULL;
	const char *s = last + strlen(PY_MARK);
	size_t len = strcspn(s, "\n");
	return json_loadb(s, len, 0, NULL);
}

/* Last non-empty line of stderr that looks like an explanation. */
static void stderr_hint(const gw_child_result *res, char *out, size_t len)
{
	static const char *const needles[] = {"Could not load dynamic library",
	                                      "Cannot dlopen",
	                                      "cuInit",
	                                      "CUDA driver",
	                                      "libcuda",
	                                      "Error",
	                                      "error"};
	if (!res->err || !res->err_len)
		return;
	for (size_t k = 0; k < sizeof needles / sizeof *needles; k++) {
		const char *hit = NULL;
		for (const char *p = strstr(res->err, needles[k]); p; p = strstr(p + 1, needles[k]))
			hit = p;
		if (!hit)
			continue;
		const char *b = hit;
		while (b > res->err && b[-1] != '\n')
			b--;
		snprintf(out, len, "%.*s", (int)strcspn(b, "\n"), b);
		return;
	}
}

static void why_failed(const gw_child_result *res, int64_t timeout_ns, char *out, size_t len)
{
	if (!res->started)
		snprintf(out, len, DOCTOR_("cannot run: %s"), strerror(res->start_errno));
	else if (res->timed_out)
		snprintf(out, len, DOCTOR_("no answer within %.1f s"), (double)timeout_ns / 1e9);
	else if (!res->exited)
		snprintf(out, len, DOCTOR_("killed by signal %d"), res->signal);
	else {
		char hint[300] = "";
		stderr_hint(res, hint, sizeof hint);
		snprintf(out, len,
		         res->status ? DOCTOR_("exited with status %d%s%s")
		                     : DOCTOR_("printed no answer and exited with status %d%s%s"),
		         res->status, hint[0] ? ": " : "", hint);
	}
}

static void parse_list(json_t *o, doctor_python *py)
{
	copy_str(o, "python", py->version, sizeof py->version);
	py->major = atoi(py->version);
	copy_str(o, "executable", py->sys_exe, sizeof py->sys_exe);
	py->venv = json_is_true(json_object_get(o, "venv"));
	json_t *mods = json_object_get(o, "modules");
	for (int i = 0; i < DOCTOR_PY_NPKG; i++) {
		json_t *v = json_object_get(mods, py_names[i]);
		py->pkg[i].installed = json_is_string(v);
		if (json_is_string(v))
			snprintf(py->pkg[i].file, sizeof py->pkg[i].file, "%s",
			         json_string_value(v));
	}
	json_t *d = json_object_get(o, "dists");
	size_t n = json_is_array(d) ? json_array_size(d) : 0;
	py->dists = calloc(n ? n : 1, sizeof *py->dists);
	for (size_t k = 0; k < n && py->dists; k++) {
		json_t *e = json_array_get(d, k);
		doctor_pydist *x = &py->dists[py->ndists++];
		copy_str(e, "name", x->name, sizeof x->name);
		copy_str(e, "version", x->version, sizeof x->version);
		copy_str(e, "location", x->location, sizeof x->location);
	}
}

static void parse_pkg(json_t *o, doctor_pypkg *k)
{
	k->probed = true;
	copy_str(o, "version", k->version, sizeof k->version);
	copy_str(o, "cuda", k->cuda, sizeof k->cuda);
	copy_str(o, "other_gpu", k->other_gpu, sizeof k->other_gpu);
	copy_str(o, "file", k->file, sizeof k->file);
	copy_str(o, "extra", k->extra, sizeof k->extra);
	copy_str(o, "error", k->error, sizeof k->error);
	k->cpu_only = json_is_true(json_object_get(o, "cpu_only"));
	json_t *gc = json_object_get(o, "gpu_count");
	k->gpu_count = json_is_integer(gc) ? (int)json_integer_value(gc) : -1;
	json_t *devs = json_object_get(o, "devices");
	for (size_t i = 0;
	     json_is_array(devs) && i < json_array_size(devs) && k->ndev < DOCTOR_PY_NDEV; i++) {
		json_t *d = json_array_get(devs, i);
		copy_str(d, "name", k->dev_name[k->ndev], sizeof k->dev_name[0]);
		copy_str(d, "uuid", k->dev_uuid[k->ndev], sizeof k->dev_uuid[0]);
		k->ndev++;
	}
	if (!k->error[0] && k->gpu_count == 0)
		copy_str(o, "warning", k->error, sizeof k->error);
}

static void run_one(const doctor_probe *p, const char *exe, const char *mode, gw_child_result *res)
{
	char *argv[] = {(char *)exe, "-c", (char *)py_script, (char *)mode, NULL};
	gw_child_spec spec = {.path = exe, .argv = argv};
	gw_child_run(&spec, p->python_timeout_ns, PY_OUT_CAP, res);
}

void doctor_python_run(const doctor_probe *p, const doctor_opts *o, doctor_python *py)
{
	memset(py, 0, sizeof *py);
	for (int i = 0; i < DOCTOR_PY_NPKG; i++) {
		py->pkg[i].name = py_names[i];
		py->pkg[i].gpu_count = -1;
	}
	char *exe = NULL;
	if (o && o->python) {
		py->explicit_path = true;
		snprintf(py->exe, sizeof py->exe, "%s", o->python);
		exe = gw_which(o->python, p->path);
	} else {
		exe = gw_which("python3", p->path);
		if (!exe)
			exe = gw_which("python", p->path);
	}
	if (!exe) {
		if (py->explicit_path)
			snprintf(py->error, sizeof py->error, "%s",
			         DOCTOR_("not found or not executable"));
		return;
	}
	py->found = true;
	snprintf(py->exe, sizeof py->exe, "%s", exe);
	gw_child_result res;
	run_one(p, exe, "list", &res);
	json_t *o_list = answer(&res);
	if (!o_list) {
		why_failed(&res, p->python_timeout_ns, py->error, sizeof py->error);
		gw_child_free(&res);
		free(exe);
		return;
	}
	gw_child_free(&res);
	py->ran = true;
	parse_list(o_list, py);
	json_decref(o_list);
	/* One child per framework, one after another: importing two big frameworks in one
	 * process (or at once on a small machine) changes what is being measured. */
	for (int i = 0; i < DOCTOR_PY_NPKG && py->major >= 3; i++) {
		doctor_pypkg *k = &py->pkg[i];
		if (!k->installed)
			continue;
		run_one(p, exe, k->name, &res);
		json_t *a = answer(&res);
		if (a) {
			parse_pkg(a, k);
			json_decref(a);
			if (!k->error[0] && k->gpu_count == 0)
				stderr_hint(&res, k->error, sizeof k->error);
		} else {
			k->timed_out = res.timed_out;
			why_failed(&res, p->python_timeout_ns, k->error, sizeof k->error);
		}
		gw_child_free(&res);
	}
	free(exe);
}

void doctor_python_free(doctor_python *py)
{
	free(py->dists);
	py->dists = NULL;
	py->ndists = 0;
}
