"""_lib.py -- finds libstepformer and declares its C functions for ctypes (src/lib/stepformer.h).

The library is looked for in this order, the first that exists wins:
  1. $STEPFORMER_LIB (the .so itself, or the folder holding it);
  2. beside this package (what `pip install ./python` after the build and the Debian package put there);
  3. build/ of the checkout this package sits in (python/stepformer -> ../../build);
  4. the system's (ctypes.util.find_library("stepformer"), then libstepformer.so.0).
"""
import ctypes
import ctypes.util
import os

API_VERSION = 1  # SF_API_VERSION of the header this module was written against

_here = os.path.dirname(os.path.abspath(__file__))
_lib = None


class StepformerError(Exception):
    """What libstepformer or the package refused, in one line (what, where, how to fix)."""


def _candidates():
    env = os.environ.get("STEPFORMER_LIB")
    if env:
        yield os.path.join(env, "libstepformer.so") if os.path.isdir(env) else env
    yield os.path.join(_here, "libstepformer.so")
    yield os.path.join(_here, "..", "..", "build", "libstepformer.so")
    found = ctypes.util.find_library("stepformer")
    if found:
        yield found
    yield "libstepformer.so.0"


def _declare(lib):
    c_int, c_char_p, c_void_p, c_size_t, c_long = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long
    F = ctypes.POINTER(ctypes.c_float)
    I = ctypes.POINTER(ctypes.c_int)
    sig = {
        "sf_api_version": (c_int, []),
        "sf_version": (c_char_p, []),
        "sf_error": (c_char_p, []),
        "sf_free_bytes": (None, [c_void_p]),
        "sf_model_open": (c_void_p, [c_char_p]),
        "sf_model_open_bytes": (c_void_p, [c_char_p, c_size_t, c_char_p, c_char_p]),
        "sf_model_free": (None, [c_void_p]),
        "sf_model_dim": (c_int, [c_void_p, c_char_p]),
        "sf_model_describe": (c_char_p, [c_void_p]),
        "sf_model_word": (c_char_p, [c_void_p, c_int]),
        "sf_tokenize": (c_int, [c_void_p, c_char_p, I, c_int]),
        "sf_run": (c_void_p, [c_void_p, c_char_p]),
        "sf_run_ids": (c_void_p, [c_void_p, I, c_int]),
        "sf_pass_free": (None, [c_void_p]),
        "sf_pass_tokens": (c_int, [c_void_p]),
        "sf_pass_token": (c_char_p, [c_void_p, c_int]),
        "sf_pass_token_id": (c_int, [c_void_p, c_int]),
        "sf_stage_count": (c_int, [c_void_p]),
        "sf_stage_name": (c_char_p, [c_void_p, c_int]),
        "sf_stage_shape": (c_int, [c_void_p, c_char_p, I]),
        "sf_stage_size": (c_long, [c_void_p, c_char_p]),
        "sf_stage_read": (c_long, [c_void_p, c_char_p, F, c_long]),
        "sf_backward": (c_int, [c_void_p, I, c_int, F]),
        "sf_step_count": (c_int, [c_void_p]),
        "sf_step_name": (c_char_p, [c_void_p, c_int]),
        "sf_step_layer": (c_int, [c_void_p, c_int]),
        "sf_step_heads": (c_int, [c_void_p, c_int]),
        "sf_step_stage": (c_char_p, [c_void_p, c_int]),
        "sf_step_label": (c_char_p, [c_void_p, c_int, c_int]),
        "sf_step_find": (c_int, [c_void_p, c_char_p, c_int]),
        "sf_render": (c_int, [c_void_p, c_int, c_int, c_int, c_int, c_int, c_int,
                              ctypes.POINTER(c_void_p), ctypes.POINTER(c_size_t)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def lib():
    """The loaded library (loaded once); StepformerError naming every place looked at when absent."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        _declare(handle)
        if handle.sf_api_version() != API_VERSION:
            raise StepformerError(
                f"{path} is libstepformer API {handle.sf_api_version()}, this package needs {API_VERSION}: "
                "build the library of the same checkout, or set STEPFORMER_LIB to it")
        _lib = handle
        return _lib
    raise StepformerError(
        "libstepformer not found (looked at " + ", ".join(tried) + "): build it (cmake --build build), "
        "or set STEPFORMER_LIB to the .so")


def error():
    """The library's last error line of this thread."""
    return lib().sf_error().decode("utf-8", "replace")


def check(ok):
    """Raises StepformerError with the library's line when ok is false (NULL, 0)."""
    if not ok:
        raise StepformerError(error())
    return ok
