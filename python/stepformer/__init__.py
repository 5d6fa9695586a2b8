"""stepformer -- every stage of a Transformer from a notebook: its numbers and its pictures.

Pure Python over libstepformer (src/lib/stepformer.h) with ctypes; numpy only (torch only when a
torch module is passed). The library is found through $STEPFORMER_LIB, then beside this package,
then build/ of the checkout, then the system's (see _lib.py).

    import stepformer
    s = stepformer.stages(model, "the cat walks by the bank", vocab=vocab)   # {"O": ..., "l0.A": ...}
    stepformer.show(model, "the cat walks by the bank", vocab=vocab)         # the softmax, inline
    stepformer.show(model, "the cat walks by the bank", vocab=vocab, step="all")
    stepformer.export(model, "the cat walks by the bank", "slides", vocab=vocab, format="png,svg")

`model` is a path (a file or folder the program opens), the bytes of a .safetensors, a torch.nn.Module
Stepformer knows (the course notebooks' modules, a module holding an nn.Embedding and an
nn.TransformerEncoder), or a stepformer.Model. Names and shapes are those of `stepformer dump`:
"O", "X", "P", "Z", "l0.Q" ... "l0.out" (layers counted from 0), per-head stages [H, rows, cols].
Errors are StepformerError with one line: what, where, how to fix.
"""
import builtins
import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy as np

from ._lib import StepformerError, check, lib

__all__ = ["Model", "Pass", "StepformerError", "stages", "show", "export", "open", "version"]
__version__ = "0.1"

PNG, SVG = 1, 2
DARK, NO_NUMBERS, MODEL_VIEW = 1, 2, 4


def version():
    """The library's version line: "0.1 (commit abc1234)"."""
    return lib().sf_version().decode()


class Model:
    """A model opened by libstepformer (freed with the object)."""

    def __init__(self, source, *, vocab=None, classes=None, config=None, name=None):
        L = self._L = lib()  # kept: __del__ may run while the interpreter shuts down
        self._h = None
        self.source = source
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if vocab is not None:
                raise StepformerError(f"{path}: a model file carries its own vocabulary: leave vocab= out")
            self._h = check(L.sf_model_open(path.encode()))
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            cfg = config.encode() if isinstance(config, str) else None
            self._h = check(L.sf_model_open_bytes(data, len(data), cfg, (name or "<memory>").encode()))
        elif _is_torch_module(source):
            from ._torch import module_bytes  # torch is imported here only
            data, label = module_bytes(source, vocab=vocab, classes=classes)
            self._h = check(L.sf_model_open_bytes(data, len(data), None, (name or label).encode()))
        else:
            from ._torch import KNOWN
            raise StepformerError(f"Stepformer cannot open a {type(source).__name__}: it opens {KNOWN}")

    def __del__(self):
        if getattr(self, "_h", None):
            self._L.sf_model_free(self._h)
            self._h = None

    def dim(self, key):
        """"V", "D", "H", "F", "layers", "classes", "max_pos", "seq2seq" or "head"."""
        return lib().sf_model_dim(self._h, key.encode())

    def describe(self):
        return lib().sf_model_describe(self._h).decode()

    def vocab(self):
        L = lib()
        return [L.sf_model_word(self._h, i).decode() for i in range(self.dim("V"))]

    def tokenize(self, text):
        L = lib()
        n = L.sf_tokenize(self._h, text.encode(), None, 0)
        if n < 0:
            raise StepformerError(L.sf_error().decode())
        ids = (ctypes.c_int * max(n, 1))()
        L.sf_tokenize(self._h, text.encode(), ids, n)
        return list(ids[:n])

    def run(self, text=None, ids=None):
        """The forward pass on text (tokenized as the program does) or on token ids."""
        L = lib()
        if (text is None) == (ids is None):
            raise StepformerError("give the sentence as text or as ids=, one of the two")
        if ids is not None:
            ids = [int(i) for i in np.asarray(ids).reshape(-1)]
            arr = (ctypes.c_int * len(ids))(*ids)
            return Pass(self, check(L.sf_run_ids(self._h, arr, len(ids))))
        return Pass(self, check(L.sf_run(self._h, text.encode())))

    def __repr__(self):
        return f"stepformer.Model({self.describe()!r})"


class Pass:
    """One forward pass: its tokens, stages, steps and pictures (it keeps its model alive)."""

    def __init__(self, model, handle):
        self.model, self._h, self._L = model, handle, lib()

    def __del__(self):
        if getattr(self, "_h", None):
            self._L.sf_pass_free(self._h)
            self._h = None

    def tokens(self):
        L = lib()
        return [L.sf_pass_token(self._h, i).decode() for i in range(L.sf_pass_tokens(self._h))]

    def names(self):
        L = lib()
        return [L.sf_stage_name(self._h, k).decode() for k in range(L.sf_stage_count(self._h))]

    def stage(self, name):
        """Stage `name` as a float32 array of its dump shape."""
        L = lib()
        shape = (ctypes.c_int * 3)()
        nd = L.sf_stage_shape(self._h, name.encode(), shape)
        if nd < 0:
            raise StepformerError(L.sf_error().decode())
        out = np.empty(tuple(shape[:nd]), dtype=np.float32)
        n = L.sf_stage_read(self._h, name.encode(), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size)
        if n < 0:
            raise StepformerError(L.sf_error().decode())
        return out

    def stages(self):
        return {n: self.stage(n) for n in self.names()}

    def backward(self, targets=None):
        """One training step's gradients: afterwards "grad.<stage>" and "loss" are stages. targets:
        one id per token (-1 none) for a model with a head, a class index for a classifier."""
        L = lib()
        loss = ctypes.c_float()
        if targets is None:
            check(L.sf_backward(self._h, None, 0, ctypes.byref(loss)))
        else:
            t = [int(x) for x in np.asarray(targets).reshape(-1)]
            arr = (ctypes.c_int * len(t))(*t)
            check(L.sf_backward(self._h, arr, len(t), ctypes.byref(loss)))
        return float(loss.value)

    # ---- steps
    def steps(self):
        """[(index, name, layer, result's dump name, heads)] for every step of the pass."""
        L = lib()
        return [(k, L.sf_step_name(self._h, k).decode(), L.sf_step_layer(self._h, k),
                 L.sf_step_stage(self._h, k).decode(), L.sf_step_heads(self._h, k))
                for k in range(L.sf_step_count(self._h))]

    def step_index(self, step, layer=0):
        """A step given as its index, its name ("softmax") with a layer, or a dump name ("l1.A")."""
        L = lib()
        if isinstance(step, (int, np.integer)):
            n = L.sf_step_count(self._h)
            if not 0 <= step < n:
                raise StepformerError(f"step {step}: this pass has steps 0 to {n - 1}")
            return int(step)
        k = L.sf_step_find(self._h, str(step).encode(), int(layer))
        if k < 0:
            raise StepformerError(L.sf_error().decode())
        return k

    def label(self, k, head=0):
        return lib().sf_step_label(self._h, k, head).decode()

    def render(self, k, head=0, size=(1280, 720), format="png", dark=False, numbers=True, model_view=False):
        """Step k drawn as the program draws it: PNG or SVG bytes."""
        L = lib()
        fmt = {"png": PNG, "svg": SVG}.get(format)
        if fmt is None:
            raise StepformerError(f"format={format!r}: give \"png\" or \"svg\"")
        flags = (DARK if dark else 0) | (0 if numbers else NO_NUMBERS) | (MODEL_VIEW if model_view else 0)
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        w, h = (int(x) for x in size)
        check(L.sf_render(self._h, k, -1 if head is None else int(head), w, h, fmt, flags, ctypes.byref(buf),
                          ctypes.byref(n)))
        try:
            return ctypes.string_at(buf, n.value)
        finally:
            L.sf_free_bytes(buf)


def _is_torch_module(x):
    import sys
    torch = sys.modules.get("torch")  # a module can exist only when torch was imported
    return torch is not None and isinstance(x, torch.nn.Module)


def _open(model, vocab=None, classes=None):
    return model if isinstance(model, Model) else Model(model, vocab=vocab, classes=classes)


def _run(model, text, ids, vocab, classes=None):
    m = _open(model, vocab, classes)
    if text is None and ids is None:
        raise StepformerError("give the sentence: stepformer.stages(model, \"the cat walks\", vocab=...) or ids=[...]")
    return m.run(text=text, ids=ids)


def stages(model, text=None, *, ids=None, vocab=None):
    """Every stage of the forward pass by its dump name -> numpy float32 array (`stepformer dump`'s
    names and shapes)."""
    return _run(model, text, ids, vocab).stages()


# ---------------------------------------------------------------- in the notebook
def _widgets_usable():
    """ipywidgets where the front end supports it. Debian 12's ipywidgets 6 with nbclient 0.7 stops
    `jupyter nbconvert --execute` when a widget is created: widgets need ipywidgets 7 or later, and
    STEPFORMER_WIDGETS=0 turns them off."""
    if os.environ.get("STEPFORMER_WIDGETS", "1") == "0":
        return False
    try:
        import ipywidgets
        from IPython import get_ipython
    except Exception:
        return False
    try:
        major = int(str(ipywidgets.__version__).split(".")[0])
    except ValueError:
        return False
    ip = get_ipython()
    return major >= 7 and ip is not None and getattr(ip, "kernel", None) is not None


def _pick_steps(p, step, layer, head):
    """[(k, head)] to draw for show's step= and head=."""
    H = p.model.dim("H")
    if step == "all":
        out = []
        for k, name, lay, res, heads in p.steps():
            if heads > 1 and head is None:
                out += [(k, h) for h in range(heads)]
            else:
                out.append((k, 0 if head is None else head))
        return out
    if step is None:  # the attention weights of the first layer: what a course shows first
        k = next((s[0] for s in p.steps() if s[1] == "softmax"), 0)
    else:
        k = p.step_index(step, layer)
    if head is not None and not -1 <= head < H:
        raise StepformerError(f"head={head}: the model has {H} head{'s' if H != 1 else ''}: give 0 to {H - 1}, "
                              "or -1 for all")
    return [(k, 0 if head is None else head)]


def show(model, text=None, *, ids=None, vocab=None, lesson=None, step=None, head=None, layer=0,
         size=(1280, 720), dark=False, numbers=True, widgets=None):
    """Shows a step of the forward pass inline in Jupyter as a PNG (kept when the notebook is
    converted to HTML or PDF): step= a step's index, its name ("softmax", with layer=) or a stage's
    dump name ("l1.A"); "all" shows every step (every head of per-head steps unless head= is given).
    head= 0-based, -1 every head as a grid. With ipywidgets 7 or later in a live front end (or
    widgets=True), a step slider and a head selector redraw the same picture.
    lesson= a lesson (a file, or a shipped lesson's name such as "intuition.md"): its steps with their
    narration, drawn by the program (`stepformer export --lesson`) on this model (model=None: the
    lesson's own) and sentence; step= the lesson step (1 ..), "all" or None (all).
    Returns nothing (the pictures are the output); stepformer.Model(model).run(text) gives the pass."""
    from IPython.display import Image, display

    if lesson is not None:
        for png in _lesson_pictures(model, text, vocab, lesson, step, size, dark, numbers):
            display(Image(data=png, format="png"))
        return
    p = _run(model, text, ids, vocab)
    picks = _pick_steps(p, step, layer, head)
    handles = [display(Image(data=p.render(k, h, size, dark=dark, numbers=numbers), format="png"),
                       display_id=True) for k, h in picks]
    if len(picks) == 1 and (widgets if widgets is not None else _widgets_usable()):
        _controls(p, picks[0], handles[0], size, dark, numbers)


def _lesson_pictures(model, text, vocab, lesson, step, size, dark, numbers):
    """The PNGs of a lesson's steps, by the program's export (a module saved for it in a temporary
    folder, removed after)."""
    prog = _program()
    if not prog:
        raise StepformerError("show(lesson=...): the stepformer program draws lessons and was not found "
                              "(build/stepformer, PATH): install it, or set STEPFORMER_BIN")
    work = tempfile.mkdtemp(prefix="stepformer-")
    try:
        args = [prog, "export", "--lesson", os.fspath(lesson), "--out", os.path.join(work, "out"), "--format", "png",
                "--size", f"{int(size[0])}x{int(size[1])}"]
        if model is not None:
            args += ["--model", _model_file(model, vocab, work)]
        if text:
            args += ["--text", text]
        if dark:
            args += ["--theme", "dark"]
        if not numbers:
            args.append("--no-numbers")
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise StepformerError((r.stderr.strip().splitlines() or ["stepformer export failed"])[-1])
        files = sorted(f for f in os.listdir(os.path.join(work, "out"))
                       if f.endswith(".png") and f.split("-", 1)[0].isdigit())  # NN-title.png
        if step not in (None, "all"):
            n = int(step)
            mine = [f for f in files if int(f.split("-", 1)[0]) == n]
            if not mine:
                last = max(int(f.split("-", 1)[0]) for f in files)
                raise StepformerError(f"show(lesson=..., step={step}): the lesson has steps 1 to {last}")
            files = mine
        out = []
        for f in files:
            with builtins.open(os.path.join(work, "out", f), "rb") as fp:
                out.append(fp.read())
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _model_file(model, vocab, folder):
    """A path the program opens for model: a path as it is, a module saved into folder."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if isinstance(model, (bytes, bytearray)):
        data, label = bytes(model), "model"
    elif _is_torch_module(model):
        from ._torch import module_bytes
        data, label = module_bytes(model, vocab=vocab)
    else:
        raise StepformerError("the program takes a model path, .safetensors bytes or a torch module")
    path = os.path.join(folder, _slug(label) + ".safetensors")
    with builtins.open(path, "wb") as fp:
        fp.write(data)
    return path


def _controls(p, pick, handle, size, dark, numbers):
    """A step slider and a head selector that redraw the shown picture (ipywidgets)."""
    import ipywidgets as w
    from IPython.display import Image, display

    steps = p.steps()
    H = p.model.dim("H")
    slider = w.IntSlider(value=pick[0], min=0, max=len(steps) - 1, description="step", continuous_update=False)
    heads = w.Dropdown(options=[("all", -1)] + [(str(h + 1), h) for h in range(H)], value=pick[1],
                       description="head")
    caption = w.Label(p.label(pick[0], pick[1]))

    def redraw(_=None):
        k, h = slider.value, heads.value
        handle.update(Image(data=p.render(k, h, size, dark=dark, numbers=numbers), format="png"))
        caption.value = p.label(k, h)

    slider.observe(redraw, names="value")
    heads.observe(redraw, names="value")
    display(w.HBox([slider, heads, caption]))


def _slug(name):
    s = "".join(c if c.isalnum() else "-" for c in name.lower())
    while "--" in s:
        s = s.replace("--", "-")
    return s.strip("-")


def export(model, text=None, out="stepformer-export", *, ids=None, vocab=None, format="png", size=(1920, 1080),
           head=None, dark=False, numbers=True):
    """Writes every step of the pass into folder `out` as `stepformer export` names them
    (NN-l1-softmax-h1.png ...): format "png", "svg", "npy" or several with commas ("png,npy": the
    stages' .npy and tokens.txt). head=None draws every head of per-head steps, -1 the grid, h one.
    Returns the paths written."""
    kinds = [f.strip() for f in format.split(",") if f.strip()]
    for f in kinds:
        if f not in ("png", "svg", "npy"):
            raise StepformerError(f"format={format!r}: use png, svg or npy (several with commas: \"png,svg\")")
    p = _run(model, text, ids, vocab)
    os.makedirs(out, exist_ok=True)
    written = []
    steps = p.steps()
    digits = 3 if len(steps) >= 100 else 2
    layers = p.model.dim("layers") > 1
    for number, (k, name, lay, res, heads) in enumerate(steps, 1):
        hs = list(range(heads)) if heads > 1 and head is None else [head if head is not None else 0]
        for h in hs:
            base = f"{number:0{digits}d}-" + (f"l{lay + 1}-" if layers and lay >= 0 else "") + _slug(name)
            if heads > 1:
                base += "-all" if h == -1 else f"-h{h + 1}"
            for f in ("png", "svg"):
                if f in kinds:
                    path = os.path.join(out, f"{base}.{f}")
                    with builtins.open(path, "wb") as fp:
                        fp.write(p.render(k, h, size, format=f, dark=dark, numbers=numbers))
                    written.append(path)
    if "npy" in kinds:
        for name, a in p.stages().items():
            path = os.path.join(out, f"{name}.npy")
            np.save(path, a)
            written.append(path)
        path = os.path.join(out, "tokens.txt")
        with builtins.open(path, "w", encoding="utf-8") as fp:
            fp.write("".join(t + "\n" for t in p.tokens()))
        written.append(path)
    return written


def _program():
    env = os.environ.get("STEPFORMER_BIN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "..", "..", "build", "stepformer"),):
        if os.path.exists(path):
            return os.path.abspath(path)
    return shutil.which("stepformer")


def open(model, text=None, *, vocab=None, lesson=None):
    """Opens the program's window on the model and sentence (a display is needed: $DISPLAY or
    $WAYLAND_DISPLAY). A module is saved as a .safetensors in a temporary folder for the program.
    Returns the subprocess.Popen of the window."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise StepformerError("stepformer.open: there is no display here (no $DISPLAY or $WAYLAND_DISPLAY): "
                              "use stepformer.show for pictures in the notebook")
    prog = _program()
    if not prog:
        raise StepformerError("stepformer.open: the stepformer program was not found (build/stepformer, PATH): "
                              "install it, or set STEPFORMER_BIN")
    path = _model_file(model, vocab, tempfile.mkdtemp(prefix="stepformer-"))  # kept: the window reads it
    args = [prog] + ([lesson] if lesson else []) + ["--model", path]
    if text:
        args += ["--text", text]
    return subprocess.Popen(args)
