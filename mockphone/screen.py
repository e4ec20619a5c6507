"""Compose the whole screen: status bar, launcher / app / shade / recents, keyboard, toast, dialog, nav bar.

The result is one :class:`Node` tree. Nodes marked ``data["hidden"]`` (the app under a
dialog, the keyboard, which is another window on a real phone) are drawn but left
out of the XML dump and of hit-testing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockphone import fonts, i18n
from mockphone import widgets as ui
from mockphone.layout import Display, Node, layout_view

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

SYSTEMUI = "com.android.systemui"
LAUNCHER = "com.google.android.apps.nexuslauncher"
KEY_ROWS = ("qwertyuiop", "asdfghjkl", "^zxcvbnm<", "@, .>")  # ^ shift, < backspace, @ symbols, > enter


def compose(phone: MockPhone) -> Node:
    d = phone.display
    top_pkg = phone.nav.foreground or LAUNCHER
    root = Node("android.widget.FrameLayout", (0, 0, d.width, d.height), top_pkg, "root")
    bottom = d.height - d.nav_h
    keyboard = phone.nav.focus is not None and phone.nav.overlay is None and phone.nav.dialog is None
    area_bottom = bottom - d.keyboard_h if keyboard else bottom
    area = (0, d.status_h, d.width, area_bottom)
    if phone.nav.overlay == "shade":
        full = (0, d.status_h, d.width, bottom)
        content = layout_view(d, i18n.localize_view(shade_view(phone), phone.locale), SYSTEMUI, full,
                              phone.nav.shade_scroll, None)
    elif phone.nav.overlay == "recents":
        content = layout_view(d, i18n.localize_view(recents_view(phone), phone.locale), LAUNCHER, area, 0, None)
    elif phone.nav.foreground is None:
        content = launcher(phone, area)
    else:
        page = phone.nav.top_page(phone.nav.foreground)
        view = phone.view_of(phone.nav.foreground, page)
        content = layout_view(d, view, phone.nav.foreground, area, page.scroll, phone.nav.focus)
    root.children.append(content)
    root.children.append(status_bar(phone))
    if keyboard:
        root.children.append(Node("android.inputmethodservice.KeyboardView", (0, area_bottom, d.width, bottom),
                                  "com.google.android.inputmethod.latin", "keyboard", data={"hidden": True}))
    root.children.append(nav_bar(d, phone.skin.nav))
    if phone.nav.heads_up is not None and phone.nav.overlay is None:
        root.children.append(heads_up(d, phone.nav.heads_up))
    if phone.nav.toast_text:
        root.children.append(toast(d, i18n.t(phone.nav.toast_text, phone.locale), top_pkg))
    if phone.nav.dialog is not None:
        for node in (content,):
            node.data["hidden"] = True
        root.children.append(dialog(d, i18n.localize_dialog(phone.nav.dialog, phone.locale),
                                    phone.nav.dialog.package or top_pkg))
    return root


def status_bar(phone: MockPhone) -> Node:
    d = phone.display
    h = d.status_h
    bar = Node("android.widget.FrameLayout", (0, 0, d.width, h), SYSTEMUI, "statusbar", rid="status_bar")
    now = phone.system.now
    bar.children.append(Node("android.widget.TextView", (d.dp(16), 0, d.dp(80), h), SYSTEMUI, "clock",
                             text=f"{now.hour}:{now.minute:02d}", rid="clock"))
    icons = []
    if phone.system.flag("global/airplane_mode_on"):
        icons.append("Airplane mode on")
    elif phone.system.flag("global/wifi_on"):
        icons.append("Wifi signal full.")
    if phone.system.flag("global/bluetooth_on"):
        icons.append("Bluetooth on.")
    icons.append("Battery 100 percent.")
    x = d.width - d.dp(16)
    for desc in reversed(icons):
        x -= d.dp(22)
        bar.children.append(Node("android.widget.ImageView", (x, d.dp(4), x + d.dp(18), h - d.dp(4)), SYSTEMUI,
                                 "sysicon", desc=desc))
    if phone.system.notifications:
        bar.children.append(Node("android.widget.ImageView", (d.dp(84), d.dp(5), d.dp(100), h - d.dp(5)), SYSTEMUI,
                                 "notif_dot", desc=f"{len(phone.system.notifications)} notifications"))
    return bar


def nav_bar(d: Display, style: str = "3button") -> Node:
    """Back / Home / Overview buttons, or (``style="gesture"``) a gesture bar: one handle, no buttons
    (home is a swipe up from it, back a swipe in from a side edge, as on a gesture-navigation phone)."""
    top = d.height - d.nav_h
    bar = Node("android.widget.FrameLayout", (0, top, d.width, d.height), SYSTEMUI, "navbar",
               rid="navigation_bar_frame")
    if style == "gesture":
        bar.children.append(Node("android.view.View", (d.width // 3, top, 2 * d.width // 3, d.height), SYSTEMUI,
                                 "nav_handle", rid="home_handle", desc="Home"))
        return bar
    w = d.width // 3
    for i, (rid, desc) in enumerate((("back", "Back"), ("home", "Home"), ("recent_apps", "Overview"))):
        bar.children.append(Node("android.widget.ImageView", (i * w, top, (i + 1) * w, d.height), SYSTEMUI,
                                 f"nav_{rid}", rid=rid, desc=desc, clickable=True, focusable=True,
                                 long_clickable=rid == "home"))
    return bar


def launcher(phone: MockPhone, area: tuple[int, int, int, int]) -> Node:
    d = phone.display
    x1, y1, x2, y2 = area
    root = Node("android.widget.FrameLayout", area, LAUNCHER, "launcher", rid="launcher")
    now = phone.system.now
    root.children.append(Node("android.widget.TextView", (d.dp(24), y1 + d.dp(24), x2 - d.dp(24), y1 + d.dp(64)),
                              LAUNCHER, "date", text=i18n.long_date(now, phone.locale), rid="date"))
    grid = Node("android.view.ViewGroup", (0, y1 + d.dp(96), x2, y2), LAUNCHER, "grid", rid="workspace")
    cols, cell_h = 4, d.dp(104)
    cell_w = d.width // cols
    for i, app in enumerate(phone.launcher_apps()):
        cx, cy = (i % cols) * cell_w, grid.bounds[1] + (i // cols) * cell_h
        if cy + cell_h > y2:
            break
        label = i18n.t(app.label, phone.locale)
        node = Node("android.widget.TextView", (cx, cy, cx + cell_w, cy + cell_h), LAUNCHER, "app_icon",
                    text=label, desc=label, clickable=True, focusable=True, long_clickable=True,
                    data={"color": app.color, "package": app.package})
        grid.children.append(node)
    root.children.append(grid)
    return root


def shade_view(phone: MockPhone) -> ui.View:
    s = phone.system
    quick = [
        ui.toggle("Wi-Fi", s.flag("global/wifi_on"), lambda v: phone.put_setting("global/wifi_on", v), rid="qs_wifi"),
        ui.toggle("Bluetooth", s.flag("global/bluetooth_on"), lambda v: phone.put_setting("global/bluetooth_on", v),
                  rid="qs_bluetooth"),
        ui.toggle("Airplane mode", s.flag("global/airplane_mode_on"),
                  lambda v: phone.put_setting("global/airplane_mode_on", v), rid="qs_airplane"),
        ui.toggle("Do not disturb", s.flag("global/do_not_disturb"),
                  lambda v: phone.put_setting("global/do_not_disturb", v), rid="qs_dnd"),
    ]
    notes = [ui.item(n.title, n.text, on_tap=(lambda n=n: phone.nav.open_notification(n)), rid="notification",
                     trailing=phone.app_by_package(n.package).label if phone.has_package(n.package) else "")
             for n in s.notifications]
    footer = (ui.button("Clear all", phone.nav.clear_notifications, rid="clear_all"),) if notes else ()
    body = tuple(quick) + ((ui.text("Notifications", style="caption", copyable=False),) if notes else ()) + tuple(notes)
    if not notes:
        body += (ui.text("No notifications", style="caption", copyable=False, rid="no_notifications"),)
    return ui.View(title=i18n.short_datetime(s.now, phone.locale), body=body, footer=footer)


def recents_view(phone: MockPhone) -> ui.View:
    items = tuple(ui.item(phone.app_by_package(p).label, "Recent app", on_tap=(lambda p=p: phone.nav.open_app(p)),
                          rid="snapshot") for p in reversed(phone.nav.recents))
    if not items:
        return ui.View(title="Recent apps", body=(ui.text("No recent items", copyable=False),))
    clear = ui.button("Clear all", phone.nav.clear_recents, rid="clear_all")
    return ui.View(title="Recent apps", body=items, footer=(clear,))


def heads_up(d: Display, note) -> Node:
    """The banner a new notification drops over the top of the screen; tap opens it, swipe up dismisses it."""
    x1, y1, x2 = d.dp(8), d.status_h + d.dp(4), d.width - d.dp(8)
    banner = Node("android.widget.FrameLayout", (x1, y1, x2, y1 + d.dp(76)), SYSTEMUI, "heads_up", rid="heads_up",
                  clickable=True, focusable=True, data={"note": note})
    banner.children = [
        Node("android.widget.TextView", (x1 + d.dp(16), y1 + d.dp(10), x2 - d.dp(16), y1 + d.dp(40)), SYSTEMUI,
             "item_title", text=note.title, rid="android:id/title"),
        Node("android.widget.TextView", (x1 + d.dp(16), y1 + d.dp(40), x2 - d.dp(16), y1 + d.dp(68)), SYSTEMUI,
             "item_subtitle", text=note.text, rid="android:id/text"),
    ]
    return banner


def toast(d: Display, message: str, pkg: str) -> Node:
    size = d.dp(14)
    width = min(d.width - d.dp(64), fonts.text_width(message, size) + d.dp(48))
    x1 = (d.width - width) // 2
    y2 = d.height - d.nav_h - d.dp(72)
    return Node("android.widget.TextView", (x1, y2 - d.dp(48), x1 + width, y2), pkg, "toast", text=message,
                rid="android:id/message")


def dialog(d: Display, dlg: ui.Dialog, pkg: str) -> Node:
    margin, pad = d.dp(40), d.dp(24)
    width = d.width - 2 * margin
    lh_title, lh_msg = int(d.dp(20) * 1.35), int(d.dp(16) * 1.35)
    title_lines = fonts.wrap(dlg.title, d.dp(20), width - 2 * pad, True)
    msg_lines = fonts.wrap(dlg.message, d.dp(16), width - 2 * pad) if dlg.message else ()
    title_h = len(title_lines) * lh_title
    msg_h = len(msg_lines) * lh_msg + d.dp(16) if msg_lines else 0
    widths = [fonts.text_width(label.upper(), d.dp(14), True) + d.dp(32) for label, _ in dlg.buttons]
    stacked = sum(widths) + d.dp(8) * len(widths) > width - d.dp(16)  # Android stacks buttons that do not fit
    buttons_h = d.dp(48) * len(widths) + d.dp(8) if stacked else d.dp(56)
    height = d.dp(20) + title_h + d.dp(12) + msg_h + buttons_h
    y1 = (d.height - height) // 2
    scrim = Node("android.widget.FrameLayout", (0, 0, d.width, d.height), pkg, "scrim", rid=dlg.rid)
    card = Node("android.widget.LinearLayout", (margin, y1, d.width - margin, y1 + height), pkg, "dialog",
                rid="android:id/parentPanel")
    ty = y1 + d.dp(20)
    card.children.append(Node("android.widget.TextView", (margin + pad, ty, d.width - margin - pad, ty + title_h),
                              pkg, "dialog_title", text=dlg.title, rid="android:id/alertTitle",
                              data={"lines": title_lines}))
    if msg_lines:
        my = ty + title_h + d.dp(12)
        card.children.append(Node("android.widget.TextView", (margin + pad, my, d.width - margin - pad, my + msg_h),
                                  pkg, "dialog_message", text=dlg.message, rid="android:id/message",
                                  data={"lines": msg_lines}))
    x, by = d.width - margin - d.dp(8), y1 + height - buttons_h
    for i, (label, _) in enumerate(reversed(dlg.buttons)):
        index = len(dlg.buttons) - 1 - i
        if stacked:  # top to bottom in the dialog's order, right-aligned like Material's stacked actions
            bw, top = widths[index], by + d.dp(48) * index
            box = (d.width - margin - d.dp(8) - bw, top, d.width - margin - d.dp(8), top + d.dp(44))
        else:
            bw = widths[index]
            x -= bw
            box = (x, y1 + height - d.dp(56), x + bw, y1 + height - d.dp(8))
            x -= d.dp(8)
        card.children.append(Node("android.widget.Button", box, pkg, "dialog_button", text=label.upper(),
                                  rid=f"android:id/button{i + 1}", clickable=True, focusable=True,
                                  data={"index": index}))
    scrim.children.append(card)
    return scrim
