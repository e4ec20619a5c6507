"""Files: folders of files; open a file to rename, move or delete it; create folders."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View

FOLDERS = ("Documents", "Download", "Music", "Pictures")
NAMES = {"Documents": ("resume.pdf", "lease_2026.pdf", "notes.txt", "budget.xlsx", "tax_return.pdf"),
         "Download": ("boarding_pass.pdf", "setup.apk", "menu.pdf", "invoice_4521.pdf", "photo_export.zip"),
         "Music": ("podcast_ep12.mp3", "song.mp3", "voice_memo.m4a"),
         "Pictures": ("IMG_2031.jpg", "IMG_2032.jpg", "screenshot_0301.png", "receipt.jpg")}


@dataclass
class FileEntry:
    name: str
    folder: str
    size_kb: int


@dataclass
class FilesState:
    folders: list[str] = field(default_factory=lambda: list(FOLDERS))
    files: list[FileEntry] = field(default_factory=list)

    def find(self, name: str) -> FileEntry | None:
        return next((f for f in self.files if f.name == name), None)

    def in_folder(self, folder: str) -> list[FileEntry]:
        return sorted((f for f in self.files if f.folder == folder), key=lambda f: f.name.lower())


class FilesApp(App):
    name = "files"
    package = "com.google.android.documentsui"
    label = "Files"
    aliases = ("file manager", "documents ui")
    color = "#00796b"

    def initial_state(self, rng: random.Random) -> FilesState:
        """The files every phone has (``NAMES``) and the seed's own extra files (``mockphone.world.organiser``)."""
        from mockphone import world

        seeded = getattr(self.phone, "world", None) or world.generate(self.phone.seed, self.phone.locale)
        files = [FileEntry(n, folder, rng.randint(12, 9000)) for folder, names in NAMES.items() for n in names]
        files += [FileEntry(f.name, f.folder, f.size_kb) for f in seeded.files]
        return FilesState(files=files)

    def page_main(self, page: Page) -> View:
        rows = [ui.item(f, f"{len(self.state.in_folder(f))} items", on_tap=(lambda f=f: self.push("folder", folder=f)),
                        rid="folder_row") for f in self.state.folders]
        return View("Files", body=tuple(rows), actions=(ui.button("New folder", lambda: self.push("new_folder"),
                                                                 rid="new_folder"),))

    def page_folder(self, page: Page) -> View:
        folder = page.args["folder"]
        rows = [ui.item(f.name, f"{f.size_kb} kB", on_tap=(lambda f=f: self.push("file", name=f.name)), rid="file_row")
                for f in self.state.in_folder(folder)]
        if not rows:
            rows = [ui.text("This folder is empty", style="caption", copyable=False, rid="empty")]
        return View(folder, up=True, body=tuple(rows))

    def page_file(self, page: Page) -> View:
        f = self.state.find(page.args["name"])
        if f is None:
            return View("File", up=True, body=(ui.text("File no longer exists", style="caption"),))
        return View(f.name, up=True, body=(
            ui.image(f.name, color="#80cbc4", height_dp=120, label=f.name.rsplit(".", 1)[-1].upper()),
            ui.text(f.name, style="title", rid="file_name"),
            ui.text(f"{f.size_kb} kB · in {f.folder}", style="caption", rid="file_info"),
            ui.button("Rename", lambda: self.push("rename", name=f.name), rid="rename", style="outline"),
            ui.button("Move to…", lambda: self.push("move", name=f.name), rid="move", style="outline"),
            ui.button("Delete", lambda: self._confirm_delete(f), rid="delete", style="danger"),
        ))

    def _confirm_delete(self, f: FileEntry) -> None:
        self.dialog("Delete file?", f"{f.name} will be permanently deleted.",
                    (("Cancel", None), ("Delete", lambda: self._delete(f))), rid="confirm_delete")

    def _delete(self, f: FileEntry) -> None:
        self.state.files.remove(f)
        self.back()
        self.toast("Deleted")

    def page_rename(self, page: Page) -> View:
        if not page.fields:
            page.fields["name"] = page.args["name"]
        return View("Rename", up=True, body=(ui.edit("name", page.field("name"), hint="File name"),),
                    footer=(ui.button("OK", lambda: self._rename(page), rid="ok"),))

    def _rename(self, page: Page) -> None:
        new = page.field("name").strip()
        f = self.state.find(page.args["name"])
        if not new or "/" in new or (self.state.find(new) is not None and new != f.name):
            self.dialog("Can't rename", "That name is empty, invalid or already used.", rid="rename_error")
            return
        f.name = new
        self.back()
        self.back()
        self.push("file", name=new)

    def page_move(self, page: Page) -> View:
        f = self.state.find(page.args["name"])
        rows = [ui.item(d, "Current folder" if d == f.folder else "", rid="destination",
                        on_tap=(lambda d=d: self._move(f, d))) for d in self.state.folders]
        return View(f"Move {f.name}", up=True, body=tuple(rows))

    def _move(self, f: FileEntry, folder: str) -> None:
        f.folder = folder
        self.back()
        self.toast(f"Moved to {folder}")

    def page_new_folder(self, page: Page) -> View:
        name = ui.edit("folder_name", page.field("folder_name"), hint="Folder name")
        return View("New folder", up=True, body=(name,),
                    footer=(ui.button("Create", lambda: self._create(page), rid="create"),))

    def _create(self, page: Page) -> None:
        name = page.field("folder_name").strip()
        if not name or name in self.state.folders:
            self.toast("Folder name is empty or exists")
            return
        self.state.folders.append(name)
        self.back()
