"""What the instructor and the students do on the hub, through the page: log in, nbgrader's formgrader,
nbgrader's Assignments list (fetch, submit, fetch feedback), the feedback as JupyterLab shows it.

Everything acts on the page as a person would (the hub's login form, menus, buttons) and reads what
the page shows.
"""

import re

from tests.browser import lab as jl

VIEWPORT = {"width": 1280, "height": 800}
SPAWN_TIMEOUT_MS = 120_000


def log_in(browser, hub, account):
    """A fresh browser context (its own cookies) logged in through the hub's login page; returns
    ``(context, page)`` once the account's JupyterLab has loaded."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(hub.url("hub/login"))
    page.locator("#username_input").fill(account.name)
    page.locator("#password_input").fill(account.password)
    page.locator("#login_submit").click()
    page.locator("#jp-main-statusbar").wait_for(timeout=SPAWN_TIMEOUT_MS)
    if not page.url.startswith(hub.url(f"user/{account.name}/lab")):
        raise AssertionError(f"{account.name} logged in but landed on {page.url}")
    return context, page


def log_in_refused(browser, hub, name, password):
    """The hub's answer to a wrong password: the login page's error text."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(hub.url("hub/login"))
        page.locator("#username_input").fill(name)
        page.locator("#password_input").fill(password)
        page.locator("#login_submit").click()
        page.locator(".login_error").wait_for(timeout=30_000)
        return page.locator(".login_error").inner_text().strip()
    finally:
        context.close()


# ------------------------------------------------------------------ the instructor: nbgrader's formgrader

def _formgrader_row(page, assignment):
    frame = page.frame_locator(".jp-MainAreaWidget iframe")
    return frame, frame.locator("#main-table tr", has=frame.locator(f'td.name[data-order="{assignment}"]'))


def _confirm_success(frame, timeout=120_000):
    """The formgrader's answer to a button: a dialog titled "Success" (its text returned) or an error."""
    dialog = frame.locator(".modal-dialog")
    dialog.wait_for(timeout=timeout)
    title = dialog.locator(".modal-title").inner_text().strip()
    body = dialog.locator(".modal-body").inner_text()
    if title != "Success":
        raise AssertionError(f"the formgrader answered {title!r}:\n{body}")
    dialog.locator(".modal-footer button", has_text="OK").click()
    dialog.wait_for(state="detached")
    return body


def formgrader_generate_and_release(page, assignment):
    """Nbgrader > Formgrader; Generate (nbgrader's generate_assignment), then Release (release_assignment to
    the exchange) for ``assignment``; returns the status the table then shows."""
    jl.menu(page, "Nbgrader", "Formgrader")
    frame, row = _formgrader_row(page, assignment)
    row.locator("td.assign a").click()
    _confirm_success(frame)
    row.locator("td.release a").click()
    _confirm_success(frame)
    frame.locator("#main-table tr", has=frame.locator(f'td.name[data-order="{assignment}"]')).locator(
        "td.status", has_text="released").wait_for()
    return row.locator("td.status").inner_text().strip()


# ------------------------------------------------------------------ the students: the Assignments list

LIST = ".jp-MainAreaWidget #{}_assignments_list"


def open_assignment_list(page):
    jl.menu(page, "Nbgrader", "Assignment List")
    page.locator(LIST.format("released")).wait_for()


def refresh_assignment_list(page):
    page.locator("#refresh_assignments_list").click()


def _item(page, which, assignment):
    return page.locator(f"{LIST.format(which)} > .list_item", has=page.locator(".item_name", has_text=assignment))


def fetch(page, assignment):
    """Released assignments > Fetch; returns once the assignment is listed under Downloaded assignments."""
    refresh_assignment_list(page)
    _item(page, "released", assignment).locator("button", has_text="Fetch").click()
    _item(page, "fetched", assignment).wait_for()


def submitted_timestamps(page, assignment):
    """The timestamps the Submitted assignments list shows for ``assignment``, oldest first."""
    items = page.locator(f"{LIST.format('submitted')} .nested_list_item .item_name")
    return sorted(re.match(r"\S+ \S+", text.strip()).group(0) for text in items.all_inner_texts()
                  if re.match(r"\S+ \S+", text.strip()))


def submit(page, assignment):
    """Downloaded assignments > Submit; returns the submission's timestamp once it is listed as submitted."""
    before = set(submitted_timestamps(page, assignment))
    _item(page, "fetched", assignment).locator("button", has_text="Submit").first.click()
    page.wait_for_function(
        """([selector, n]) => document.querySelectorAll(selector).length > n""",
        arg=[f"{LIST.format('submitted')} .nested_list_item", len(before)], timeout=60_000)
    new = set(submitted_timestamps(page, assignment)) - before
    if len(new) != 1:
        raise AssertionError(f"submitting {assignment} added {sorted(new)} to the Submitted list")
    return new.pop()


def fetch_feedback(page, assignment):
    """Submitted assignments > Fetch Feedback; returns once a "(view feedback)" link is shown."""
    refresh_assignment_list(page)
    _item(page, "submitted", assignment).locator("button", has_text="Fetch Feedback").click()
    page.locator(f"{LIST.format('submitted')} a", has_text="view feedback").first.wait_for()


def read_feedback(page, assignment):
    """(view feedback): the file browser goes to the feedback's folder; open the HTML there as the student
    does (JupyterLab's HTML viewer) and return the text it shows."""
    page.locator(f"{LIST.format('submitted')} a", has_text="view feedback").last.click()
    listing = page.locator(".jp-DirListing-item", has_text=f"{assignment}.html")
    listing.wait_for()
    listing.dblclick()
    frame = page.frame_locator(".jp-HTMLViewer iframe").last
    frame.locator("body").wait_for()
    frame.locator("body", has_text="Score").wait_for()
    return frame.locator("body").inner_text()
