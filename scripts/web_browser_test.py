#!/usr/bin/python3
"""scripts/web_browser_test.py SITE -- the browser test of scripts/test-web (see there).

Serves SITE on 127.0.0.1, starts headless Chromium at 1280x720 with a DevTools port, and talks to
the page with the DevTools protocol (python3-websocket). Checks, each printed, any failure exits 1:
  1. ?step=7 opens the cat/bank lesson at step 7 (the program's state line, sf_web_describe) within
     the time limit, and the first picture is drawn (a screenshot that is not one flat colour);
  2. the Right arrow key steps to 8 and the picture changes; the Left arrow back to 7; a click
     inspects a cell; E, typed keys and Enter change the sentence; Ctrl+C copies it to the
     system clipboard, Ctrl+V pastes from it;
  3. S saves the view: a PNG arrives in the download folder; Ctrl+E: one zip of every step; the
     canvas follows the browser window's size; F makes the page fullscreen;
  4. a model file dropped on the page (translate.safetensors) opens; a broken one is refused with the
     command line's one-line message, shown in the page;
  5. ?text=the+bank+of+the+river opens that sentence;
  6. a sentence of 61 words shows a window of its tokens on the scores step, and > moves it.
Nothing is timed as a pass/fail but the 60 s limit for the page to start; the time to the first
step drawn is printed.
"""
import base64, functools, hashlib, http.server, json, os, shutil, socket, subprocess, sys, tempfile, threading, time, urllib.request
import websocket

SITE = sys.argv[1]
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm"}

    def log_message(self, *a):
        pass


web_port = free_port()
server = http.server.ThreadingHTTPServer(("127.0.0.1", web_port), functools.partial(Quiet, directory=SITE))
threading.Thread(target=server.serve_forever, daemon=True).start()

devtools_port = free_port()
profile = tempfile.mkdtemp(prefix="sf-chromium-")
downloads = tempfile.mkdtemp(prefix="sf-downloads-")
chromium = subprocess.Popen(
    ["chromium", "--headless", "--no-sandbox", "--disable-gpu-sandbox", "--enable-unsafe-swiftshader",
     "--hide-scrollbars", "--window-size=1280,720", f"--remote-debugging-port={devtools_port}",
     "--remote-allow-origins=*",
     f"--user-data-dir={profile}", "--no-first-run", "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cleanup():
    chromium.terminate()
    try:
        chromium.wait(10)
    except subprocess.TimeoutExpired:
        chromium.kill()
    server.shutdown()
    shutil.rmtree(profile, ignore_errors=True)
    shutil.rmtree(downloads, ignore_errors=True)


try:
    ws_url = None
    for _ in range(200):  # Chromium starts slowly on a loaded machine
        try:
            pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{devtools_port}/json/list"))
            ws_url = next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")
            break
        except Exception:
            time.sleep(0.2)
    if not ws_url:
        print("FAIL Chromium's DevTools did not answer")
        sys.exit(1)
    # no Origin header: Chromium refuses a DevTools connection from an origin it was not told of
    # (403 on some Debian 12 Chromium builds), and --remote-allow-origins=* above allows it on others
    ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
    next_id = [0]

    def call(method, **params):
        next_id[0] += 1
        ws.send(json.dumps({"id": next_id[0], "method": method, "params": params}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == next_id[0]:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(expr):
        r = call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def describe():
        return js("typeof Module !== 'undefined' && Module._sf_web_describe ? "
                  "UTF8ToString(Module._sf_web_describe()) : ''") or ""

    def wait_for(pred, limit):
        t0 = time.time()
        while time.time() - t0 < limit:
            line = describe()
            if pred(line):
                return line, time.time() - t0
            time.sleep(0.05)
        return describe(), None

    def screenshot():
        return base64.b64decode(call("Page.captureScreenshot", format="png")["data"])

    def key(name, code, vk, text=None):
        for kind in ("keyDown", "keyUp"):
            p = dict(type=kind, key=name, code=code, windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
            if text and kind == "keyDown":
                p["text"] = text
            call("Input.dispatchKeyEvent", **p)
        time.sleep(0.3)

    def open_page(query):
        call("Page.navigate", url=f"http://127.0.0.1:{web_port}/index.html{query}")

    call("Page.enable")
    call("Runtime.enable")
    call("Emulation.setDeviceMetricsOverride", width=1280, height=720, deviceScaleFactor=1, mobile=False)
    call("Browser.setDownloadBehavior", behavior="allow", downloadPath=downloads)

    # 1. a lesson step from the address
    open_page("?step=7")
    line, took = wait_for(lambda l: l.startswith("step 7/"), 60)
    check(took is not None, f"?step=7 opens the lesson at step 7 ({line[:70]!r})")
    if took is not None:
        print(f"     first step drawn {took:.2f} s after the page was asked for", flush=True)
    time.sleep(0.5)
    first = screenshot()
    with open(os.path.join(tempfile.gettempdir(), "stepformer-web-step7.png"), "wb") as f:
        f.write(first)
    check(len(first) > 20000, f"the picture is drawn ({len(first)} bytes of PNG)")

    # 2. keys step
    js("Module.canvas.focus()")
    key("ArrowRight", "ArrowRight", 39)
    line, took = wait_for(lambda l: l.startswith("step 8/"), 10)
    check(took is not None, f"Right arrow: step 8 ({line[:40]!r})")
    second = screenshot()
    check(hashlib.sha1(first).digest() != hashlib.sha1(second).digest(), "the picture changed")
    key("ArrowLeft", "ArrowLeft", 37)
    line, took = wait_for(lambda l: l.startswith("step 7/"), 10)
    check(took is not None, f"Left arrow: back to step 7 ({line[:40]!r})")

    # a click on a cell of Q (the right-hand matrix of step 7 at 1280x720) inspects and pins it
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        call("Input.dispatchMouseEvent", type=kind, x=1100, y=400, button="left", clickCount=1)
    time.sleep(0.5)
    line = describe()
    check(" cell=-" not in line and "pinned=1" in line, f"a click inspects a cell ({line[20:75]!r})")
    key("Escape", "Escape", 27)

    # typing a sentence: E, then keys, then Enter: the sentence of the page changes
    key("e", "KeyE", 69, "e")
    line, took = wait_for(lambda l: "editing=1" in l, 5)
    check(took is not None, "E starts typing a sentence")
    key("End", "End", 35)
    for ch in " river":
        key(ch, "Space" if ch == " " else "Key" + ch.upper(), 32 if ch == " " else ord(ch.upper()), ch)
    key("Enter", "Enter", 13, "\r")
    line, took = wait_for(lambda l: "editing=0" in l and 'bank river"' in l, 5)
    check(took is not None, f"typed keys reach the sentence ({line[line.find('text='):][:50]!r})")

    # copy: E, Ctrl+A, Ctrl+C put the sentence on the system clipboard (navigator.clipboard)
    call("Browser.grantPermissions", permissions=["clipboardReadWrite", "clipboardSanitizedWrite"])
    ctrl = dict(key="Control", code="ControlLeft", windowsVirtualKeyCode=17, location=1)

    def ctrl_key(k, code, vk):  # (SDL keeps the modifier state from the Control key's own events)
        call("Input.dispatchKeyEvent", type="rawKeyDown", modifiers=2, **ctrl)
        call("Input.dispatchKeyEvent", type="rawKeyDown", key=k, code=code, windowsVirtualKeyCode=vk, modifiers=2)
        call("Input.dispatchKeyEvent", type="keyUp", key=k, code=code, windowsVirtualKeyCode=vk, modifiers=2)
        call("Input.dispatchKeyEvent", type="keyUp", modifiers=0, **ctrl)
        time.sleep(0.3)

    key("e", "KeyE", 69, "e")
    ctrl_key("a", "KeyA", 65)
    ctrl_key("c", "KeyC", 67)
    key("Escape", "Escape", 27)
    got = call("Runtime.evaluate", expression="navigator.clipboard.readText()", awaitPromise=True,
               returnByValue=True).get("result", {}).get("value")
    check(got == "The cat walks by the bank river", f"Ctrl+C copies the sentence to the system clipboard ({got!r})")

    # paste: the system clipboard's text replaces the selected sentence (Ctrl+A, Ctrl+V, Enter)
    call("Runtime.evaluate", expression="navigator.clipboard.writeText('A bank by the river')", awaitPromise=True)
    key("e", "KeyE", 69, "e")
    ctrl_key("a", "KeyA", 65)
    ctrl_key("v", "KeyV", 86)
    time.sleep(0.5)
    key("Enter", "Enter", 13, "\r")
    line, took = wait_for(lambda l: 'text="A bank by the river"' in l and "editing=0" in l, 5)
    check(took is not None, f"Ctrl+V pastes the system clipboard ({line[line.find('text='):][:40]!r})")

    # 3. S downloads the view as PNG
    js("window.sfDownloads = []; Module.sfDownloaded = function(n, size) { sfDownloads.push(n); }")
    key("s", "KeyS", 83, "s")
    time.sleep(1)
    print("     after S: " + describe()[-120:] + " | offered: " + json.dumps(js("window.sfDownloads")), flush=True)
    got = []
    for _ in range(100):
        got = [f for f in os.listdir(downloads) if f.endswith(".png")]
        if got:
            break
        time.sleep(0.1)
    check(bool(got), f"S downloads a PNG ({', '.join(got) or 'none'})")

    # Ctrl+E exports every step: one .zip download that holds a PNG of each step
    ctrl_key("e", "KeyE", 69)
    zips = []
    for _ in range(600):
        zips = [f for f in os.listdir(downloads) if f.endswith(".zip")]
        if zips:
            break
        time.sleep(0.1)
    names = []
    if zips:
        time.sleep(0.5)
        import zipfile
        with zipfile.ZipFile(os.path.join(downloads, zips[0])) as z:
            bad = z.testzip()
            names = [n for n in z.namelist() if n.endswith(".png")]
        check(bad is None, "the export's zip reads back intact")
    print("     after Ctrl+E: " + describe()[-150:] + " | offered: " + json.dumps(js("window.sfDownloads")), flush=True)
    check(len(names) >= 20, f"Ctrl+E downloads the export as one zip ({zips}, {len(names)} PNG)")

    # the page follows the browser window's size: the canvas, and the picture drawn on it
    call("Emulation.setDeviceMetricsOverride", width=1000, height=600, deviceScaleFactor=1, mobile=False)
    js("window.dispatchEvent(new Event('resize'))")
    time.sleep(1.0)
    size = js("Module.canvas.width + 'x' + Module.canvas.height")
    check(size == "1000x600", f"the canvas follows the window to 1000x600 ({size})")
    with open(os.path.join(tempfile.gettempdir(), "stepformer-web-1000x600.png"), "wb") as f:
        f.write(screenshot())
    call("Emulation.setDeviceMetricsOverride", width=1280, height=720, deviceScaleFactor=1, mobile=False)
    js("window.dispatchEvent(new Event('resize'))")
    time.sleep(0.5)

    # F: fullscreen (the browser's, asked for from the key press), Escape leaves it
    # (SDL asks for it in the browser's next input event, as browsers want: a key held for a
    # moment, as a person presses it, so that the key's release is that event)
    call("Input.dispatchKeyEvent", type="keyDown", key="f", code="KeyF", windowsVirtualKeyCode=70, text="f")
    time.sleep(0.4)
    call("Input.dispatchKeyEvent", type="keyUp", key="f", code="KeyF", windowsVirtualKeyCode=70)
    time.sleep(0.5)
    full = js("!!document.fullscreenElement")
    line = describe()
    check(full and "fullscreen=1" in line, f"F makes the page fullscreen (document.fullscreenElement {full})")
    key("Escape", "Escape", 27)
    time.sleep(0.5)

    # 4. a model file dropped on the page opens; a bad one is refused in one line, shown in the
    # page; the file button opens a lesson
    def drop(name, data):
        b64 = base64.b64encode(data).decode()
        js(f"sfOpenFile({json.dumps(name)}, Uint8Array.from(atob('{b64}'), c => c.charCodeAt(0)))")
        time.sleep(1.0)
        return js("document.getElementById('status').textContent") or ""

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "assets", "models", "translate.safetensors"), "rb") as f:
        line = drop("translate.safetensors", f.read())
    check(line.startswith("stepformer: opened /dropped/translate.safetensors"), f"a dropped model opens ({line!r})")
    check(describe().startswith("step 1/") and "/25 " not in describe(),
          f"... and is shown: its own steps, not the lesson's 25 ({describe()[:40]!r})")
    before = describe()
    line = drop("broken.pt", b"PK\x03\x04 this is not a model")
    check(line.startswith("stepformer: ") and "broken.pt" in line and "opened" not in line,
          f"a bad model is refused in one line in the page ({line[:100]!r})")
    check(describe() == before, "... and the page keeps what it showed")

    # the file button (web/shell.html) opens a chosen lesson as a drop does: a file given to its
    # <input type=file> through the protocol, as the browser's file chooser would
    vis = js("(function(){var r=document.getElementById('open').getBoundingClientRect();"
             "return r.width>0&&r.height>0&&r.right<=innerWidth&&r.bottom<=innerHeight;})()")
    check(vis is True, "the page shows a file button")
    doc = call("DOM.getDocument")
    node = call("DOM.querySelector", nodeId=doc["root"]["nodeId"], selector="#open-file")["nodeId"]
    call("DOM.setFileInputFiles", nodeId=node, files=[os.path.join(root, "lessons", "masking.md")])
    line = ""
    for _ in range(50):
        time.sleep(0.2)
        line = js("document.getElementById('status').textContent") or ""
        if "masking.md" in line:
            break
    check(line.startswith("stepformer: opened /dropped/masking.md"), f"the file button opens a lesson ({line!r})")
    check(describe() != before, f"... and shows it ({describe()[:40]!r})")

    # 5. a sentence from the address
    open_page("?text=the+bank+of+the+river")
    line, took = wait_for(lambda l: "bank of the river" in l, 60)
    check(took is not None, f"?text= opens the sentence ({line[:80]!r})")

    # 6. a sentence of 61 words: its scores show a window of the tokens, and Shift+. (> on a US
    # keyboard) moves it on (issue 31.8)
    words = ("the cat walks by the bank and the dog sleeps by the river while the bird sings in the tree and "
             "the fish swims in the water near the old house where the man reads a book about the sea and the "
             "ship sails away to the far island with the cat and the dog by the bank of the river")
    open_page("?text=" + words.replace(" ", "+") + "&step=7")
    line, took = wait_for(lambda l: "stage=scores" in l and " tokens=1-" in l, 60)
    check(took is not None, f"61 words: the scores show a window of the tokens ({line[line.find('tokens='):][:20]!r})")
    shift = dict(key="Shift", code="ShiftLeft", windowsVirtualKeyCode=16, location=1)
    call("Input.dispatchKeyEvent", type="rawKeyDown", modifiers=8, **shift)
    call("Input.dispatchKeyEvent", type="rawKeyDown", key=">", code="Period", windowsVirtualKeyCode=190, modifiers=8)
    call("Input.dispatchKeyEvent", type="keyUp", key=">", code="Period", windowsVirtualKeyCode=190, modifiers=8)
    call("Input.dispatchKeyEvent", type="keyUp", modifiers=0, **shift)
    line, took = wait_for(lambda l: " tokens=" in l and " tokens=1-" not in l, 5)
    check(took is not None, f"> moves the window ({line[line.find('tokens='):][:20]!r})")
finally:
    cleanup()

print("test-web: " + ("all passed" if failures == 0 else f"{failures} failed"))
sys.exit(1 if failures else 0)
