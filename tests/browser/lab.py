"""What a student does in JupyterLab, through the page: open, run from the Run menu, type, save, read outputs.

Everything here acts on the page the way a person would (menus, clicks, keys) and reads what
the page shows (prompts, output areas, the status bar, the tab's dirty mark); nothing talks
to the kernel or the contents API behind the page's back.
"""

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

CELLS = ".jp-NotebookPanel .jp-Notebook .jp-Cell"
TRACEBACK = "Traceback (most recent call last)"
# A failed check shows only its message (autograder/checks/notebook_display.py), no traceback: "CheckFailure: [check_x] ..."
CHECK_FAILED = ("CheckFailure: [", "PendingGPU: [")

# One look at every cell of the open notebook. ``textContent`` rather than ``innerText``: JupyterLab
# renders off-screen cells with `content-visibility: auto`, and innerText is empty for those.
_READ_CELLS = """cells => cells.map(cell => ({
    code: cell.classList.contains('jp-CodeCell'),
    prompt: (cell.querySelector('.jp-InputArea-prompt') || {}).textContent || '',
    source: Array.from(cell.querySelectorAll('.jp-InputArea .cm-line')).map(l => l.textContent).join('\\n'),
    outputs: Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(o => o.textContent),
}))"""


@dataclass
class Cell:
    index: int
    code: bool
    prompt: str
    source: str
    outputs: list

    @property
    def count(self):
        """The execution count shown in the prompt, ``"*"`` while running, ``None`` when never run."""
        found = re.search(r"\[(\d+|\*)\]", self.prompt)
        if not found:
            return None
        return found.group(1) if found.group(1) == "*" else int(found.group(1))

    @property
    def text(self):
        return "\n".join(self.outputs)

    @property
    def failed(self):
        return TRACEBACK in self.text or any(mark in self.text for mark in CHECK_FAILED)


def cells(page):
    return [Cell(i, **c) for i, c in enumerate(page.locator(CELLS).evaluate_all(_READ_CELLS))]


def kernel_idle(page):
    return bool(re.search(r"\|\s*Idle", page.locator("#jp-main-statusbar").text_content() or ""))


def open_notebook(page, lab, path, n_cells, timeout=60_000):
    """Open ``path`` and wait until its kernel is idle.

    In a JupyterLab page already loaded, with File > Open from Path; otherwise by loading
    JupyterLab at the notebook's address in a fresh workspace, the file browser folded away
    as a student does to read (the notebook gets the whole width).
    """
    if page.url.startswith(lab.base + "/lab") and page.locator("#jp-main-statusbar").count():
        menu(page, "File", "Open from Path…")
        page.locator(".jp-Dialog input").fill(path)
        page.locator(".jp-Dialog .jp-Dialog-button", has_text="Open").click()
    else:
        page.goto(lab.url(f"lab/tree/{path}") + "&reset")   # reset: only this document open
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=n_cells,
                           timeout=timeout)
    page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle")).wait_for(timeout=timeout)
    page.keyboard.press("Escape")
    fold_left_sidebar(page)


def fold_left_sidebar(page):
    """Fold the file browser away, as a student does to read: the notebook gets the whole width."""
    if page.locator("#jp-left-stack").is_visible():
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
        page.locator("#jp-left-stack").wait_for(state="hidden")


def close_all(page):
    """File > Close All Tabs, discarding what was not saved; False when the page is no JupyterLab page."""
    if not page.locator("#jp-main-statusbar").count():
        return False
    page.keyboard.press("Escape")
    menu(page, "File", "Close All Tabs")
    for _ in range(20):          # one question per notebook with unsaved changes
        page.wait_for_function("() => !document.querySelector('.jp-NotebookPanel') "
                               "|| document.querySelector('.jp-Dialog')", timeout=5000)
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            return True
        dialog.locator(".jp-Dialog-button", has_text="Discard").click()
        dialog.wait_for(state="detached")
    raise AssertionError("File > Close All Tabs left notebooks open")


def menu(page, *path):
    """Click through the menu bar, e.g. ``menu(page, "Run", "Run All Cells")``."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(path[0])}$")).click()
    for label in path[1:]:
        item = page.locator(".lm-Menu-item", has=page.locator(".lm-Menu-itemLabel",
                                                              has_text=re.compile(f"^{re.escape(label)}$")))
        if "lm-mod-disabled" in (item.get_attribute("class") or ""):
            page.keyboard.press("Escape")
            raise AssertionError(f"the menu item {' > '.join(path)} is disabled")
        item.click()


def _last_count(page):
    return max((c.count for c in cells(page) if isinstance(c.count, int)), default=0)


def wait_for_run(page, after, timeout=120):
    """Wait until the kernel has run something past execution count ``after`` and is idle again.

    Idle five times in a row, a tenth of a second apart, with no cell showing ``[*]`` (with twice, one
    run on 2026-11-24 took a Run All for finished while some cells had not run yet).
    """
    deadline, settled = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        now = cells(page)
        running = any(c.count == "*" for c in now)
        ran = max((c.count for c in now if isinstance(c.count, int)), default=0) > after
        settled = settled + 1 if (ran and not running and kernel_idle(page)) else 0
        if settled >= 5:
            return now
        time.sleep(0.1)
    raise TimeoutError(f"the notebook did not finish running within {timeout} s; prompts: "
                       f"{[c.prompt for c in cells(page) if c.code]}")


def run_all(page):
    """Run > Run All Cells, as a student does. JupyterLab stops at the first cell that raises unless the cell is
    tagged `raises-exception` (the release notebooks tag every cell but the solutions)."""
    before = _last_count(page)
    menu(page, "Run", "Run All Cells")
    return wait_for_run(page, before)


def type_into_cell(page, index, old, new):
    """Change cell ``index`` from ``old`` to ``new`` by typing, key by key, as a student does: the lines
    they share at the top stay, the rest of ``old`` is selected with the keyboard and typed over.

    The editor indents a new line by itself; each typed line's own indentation replaces that
    (Shift+Home selects the automatic indent, and typing replaces a selection).
    """
    old_lines, new_lines = old.rstrip("\n").split("\n"), new.rstrip("\n").split("\n")
    keep = 0
    while keep < min(len(old_lines), len(new_lines)) and old_lines[keep] == new_lines[keep]:
        keep += 1
    cell = page.locator(CELLS).nth(index)
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    if keep == 0:
        page.keyboard.press("Control+a")
        typed = new_lines
    else:
        # From the end of the last line kept to the end of the cell: the line break and what follows.
        page.keyboard.press("Control+End")
        for _ in range(len(old_lines) - keep):
            page.keyboard.press("Shift+ArrowUp")
        page.keyboard.press("Shift+End")
        typed = [None] + new_lines[keep:]        # None: the line break that the selection took
    for n, line in enumerate(typed):
        if n:
            page.keyboard.press("Enter")
            page.keyboard.press("Shift+Home")
        if line:
            page.keyboard.type(line)
        elif n:
            page.keyboard.type(" ")          # replaces a selected automatic indent (or adds a space)
            page.keyboard.press("Backspace")  # and leaves the line empty
    page.keyboard.press("Escape")             # back to command mode, as after editing


def reload_from_disk(page, n_cells, timeout=30_000):
    """File > Reload Notebook from Disk, confirming JupyterLab's question when the notebook has changes.

    Returns once the page shows the file's ``n_cells`` cells, none of them run yet.
    """
    menu(page, "File", "Reload Notebook from Disk")
    dialog = page.locator(".jp-Dialog")
    try:
        dialog.wait_for(timeout=3000)
    except Exception:  # noqa: BLE001 - no question asked: nothing unsaved
        pass
    else:
        dialog.locator(".jp-Dialog-button", has_text="Reload").click()
        dialog.wait_for(state="detached")
    page.wait_for_function(
        """([selector, n]) => {
            const cells = document.querySelectorAll(selector);
            return cells.length === n && Array.from(cells).every(
                c => !/\\[[0-9*]+\\]/.test((c.querySelector('.jp-InputArea-prompt') || {}).textContent || ''));
        }""", arg=[CELLS, n_cells], timeout=timeout)


def close_and_shut_down(page, timeout=30_000):
    """File > Close and Shut Down Notebook…, confirmed: the tab closes and its kernel stops."""
    menu(page, "File", "Close and Shut Down Notebook…")
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-warn").click()
    page.wait_for_function("() => !document.querySelector('.jp-NotebookPanel, .jp-Dialog')", timeout=timeout)


def dirty(page):
    return page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current.jp-mod-dirty").count() > 0


def save(page, timeout=15_000):
    """Ctrl+S; returns once the tab no longer shows unsaved changes."""
    page.keyboard.press("Control+s")
    page.wait_for_selector(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current.jp-mod-dirty",
                           state="detached", timeout=timeout)


def show(page, index, block="start"):
    """Scroll cell ``index``'s top to the top of the notebook, or (``block="end"``) the end of its
    output to the bottom, for a person to look at. Twice: cells that come into view get their real
    height only once rendered, which moves the target.
    """
    cell = page.locator(CELLS).nth(index)
    target = cell.locator(".jp-OutputArea-output").last if block == "end" else cell
    for _ in range(2):
        target.evaluate(f"e => e.scrollIntoView({{block: '{block}'}})")
        page.wait_for_timeout(300)


def screenshot(page, name, keep_in, publish_to=None):
    """Save the visible page as ``keep_in/name`` (and copy it to ``publish_to`` when given)."""
    path = Path(keep_in) / name
    page.mouse.move(0, 0)                     # no hover tooltip or cell toolbar in the picture
    page.screenshot(path=str(path))
    if publish_to:
        Path(publish_to).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(publish_to) / name)
    return path
