"""libwavec.so through ctypes: finding it, and the C API's signatures.

The library is looked for, in order, at $WAVEC_LIB; beside this package
(`pip install ./python` bundles a built library); in the checkout this
package sits in (build/release, then build/debug: `make lib`); on the
system's library path.
"""
import ctypes
import ctypes.util
import os

from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

MAX_DIMS = 8


class ArgInfo(ctypes.Structure):
    """wavec_arg_info"""
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("ndims", c_size_t),
                ("shape", c_int64 * MAX_DIMS), ("elems", c_size_t), ("bytes", c_size_t),
                ("is_output", c_int)]


class CacheEntry(ctypes.Structure):
    """wavec_cache_entry"""
    _fields_ = [("file", c_char_p), ("bytes", c_uint64), ("valid", c_int), ("kernel", c_char_p),
                ("target", c_char_p), ("desc", c_char_p)]


ctx_p = c_void_p     # wavec_ctx *
kernel_p = c_void_p  # wavec_kernel *
module_p = c_void_p  # wavec_module *
status = c_int       # wavec_status

# name: (result, argument types)
SIGNATURES = {
    "wavec_version": (c_char_p, []),
    "wavec_status_string": (c_char_p, [c_int]),
    "wavec_ctx_new": (ctx_p, [c_void_p, c_void_p]),
    "wavec_ctx_free": (None, [ctx_p]),
    "wavec_errmsg": (c_char_p, [ctx_p]),
    "wavec_errcode": (status, [ctx_p]),
    "wavec_define_int": (status, [ctx_p, c_char_p, c_int64]),
    "wavec_define_float": (status, [ctx_p, c_char_p, c_double]),
    "wavec_unused_define": (c_char_p, [ctx_p, c_size_t]),
    "wavec_hardware_override": (status, [ctx_p, c_char_p, c_char_p]),
    "wavec_hardware_key": (c_char_p, [c_size_t]),
    "wavec_parse": (status, [ctx_p, c_char_p, c_char_p, c_size_t]),
    "wavec_parse_kernel": (status, [ctx_p, c_char_p, c_char_p, c_size_t, c_char_p]),
    "wavec_kernel_count": (c_size_t, [ctx_p]),
    "wavec_kernel_get": (kernel_p, [ctx_p, c_size_t]),
    "wavec_kernel_find": (kernel_p, [ctx_p, c_char_p]),
    "wavec_kernel_name": (c_char_p, [kernel_p]),
    "wavec_compile": (status, [kernel_p, c_void_p]),
    "wavec_arg_count": (c_size_t, [kernel_p]),
    "wavec_arg_info_get": (c_int, [kernel_p, c_size_t, POINTER(ArgInfo)]),
    "wavec_arg_shape": (status, [kernel_p, c_size_t, c_size_t, POINTER(c_int64)]),
    "wavec_arg_dim_name": (c_char_p, [kernel_p, c_size_t, c_size_t]),
    "wavec_simulate": (status, [kernel_p, POINTER(c_void_p)]),
    "wavec_emit_ptx": (status, [kernel_p, c_char_p, POINTER(c_char_p), POINTER(c_size_t)]),
    "wavec_launch_dims": (status, [kernel_p, c_uint32 * 3, c_uint32 * 3, POINTER(c_size_t)]),
    "wavec_remark_count": (c_size_t, [kernel_p]),
    "wavec_remark": (c_char_p, [kernel_p, c_size_t]),
    "wavec_dtype_name": (c_char_p, [c_int]),
    "wavec_gpu_load": (status, [ctx_p, c_char_p, c_char_p, ctypes.c_uint, POINTER(module_p)]),
    "wavec_module_kernel": (c_char_p, [module_p]),
    "wavec_module_target": (c_char_p, [module_p]),
    "wavec_module_cached": (c_int, [module_p]),
    "wavec_module_launch_dims": (None, [module_p, c_uint32 * 3, c_uint32 * 3, POINTER(c_size_t)]),
    "wavec_module_arg_count": (c_size_t, [module_p]),
    "wavec_module_arg": (c_int, [module_p, c_size_t, POINTER(ArgInfo)]),
    "wavec_module_arg_shape": (status, [module_p, c_size_t, c_size_t, POINTER(c_int64)]),
    "wavec_module_dim_name": (c_char_p, [module_p, c_size_t, c_size_t]),
    "wavec_module_launch": (status, [module_p, c_void_p, POINTER(c_uint64)]),
    "wavec_cache_dir": (c_char_p, [ctx_p]),
    "wavec_cache_list": (status, [ctx_p, POINTER(POINTER(CacheEntry)), POINTER(c_size_t)]),
    "wavec_cache_clear": (status, [ctx_p, POINTER(c_size_t)]),
}

LOAD_NO_CACHE = 1
LOAD_PTXAS = 2
LOAD_DRIVER = 4


def candidates():
    """Where the library may be, in the order they are tried."""
    env = os.environ.get("WAVEC_LIB")
    if env:
        return [env]  # when set, it alone: a wrong path is an error, not a fallback
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))
    found = [os.path.join(here, "libwavec.so")]
    found += [os.path.join(checkout, "build", mode, "libwavec.so") for mode in ("release", "debug")]
    system = ctypes.util.find_library("wavec")
    if system:
        found.append(system)
    return found


def load():
    tried = []
    for path in candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        missing = [name for name in SIGNATURES if not hasattr(lib, name)]
        if missing:
            tried.append(f"{path} (lacks {', '.join(missing[:3])}: built from older sources?)")
            continue
        for name, (res, args) in SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        lib.path = path
        return lib
    raise ImportError("wavec: libwavec.so not found; build it with `make lib` in the wavec checkout, "
                      "or set WAVEC_LIB to its path. Tried: " + "; ".join(tried))


lib = load()
