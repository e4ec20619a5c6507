"""Importers of public trajectory datasets into the lake, one module per dataset.

    from collectors.importers import import_dataset
    report = import_dataset(lake, "aitw", ["aitw/general-00000-of-00010"])
    report.written, report.skipped, report.quarantined

Every importer yields ``base.Item``s; ``base.run_import`` writes them (bad records to
quarantine with the dataset, file, offset and reason). Imported episodes have stable
ids, so a rerun skips what is already in the lake.
"""

from __future__ import annotations

from collections.abc import Callable

from collectors.importers import aitw, amex, androidcontrol, androidworld, hub, odyssey
from collectors.importers.base import DatasetReport, held_parts, run_import

FORMATS = {
    "androidcontrol": androidcontrol.items,
    "aitw": aitw.items,
    "gui-odyssey": odyssey.items,
    "amex": amex.items,
    "androidworld": androidworld.items,
    "hub": hub.items,
}
RESUMABLE = {"aitw"}  # per-step formats: an episode cut by a file boundary is held until its other file comes


def import_dataset(lake, fmt: str, paths: list[str], *, split: str | None = None,
                   progress: Callable[[int], None] | None = None) -> DatasetReport:
    """Import ``paths`` (files, folders, or hf:// URLs for ``hub``) written in dataset format ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown dataset format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    reader = FORMATS[fmt]
    extra = {"held": lambda ids: held_parts(lake, fmt, ids)} if fmt in RESUMABLE else {}
    report = run_import(lake, fmt, lambda known: reader([str(p) for p in paths], known, split, **extra),
                        progress=progress)
    report.files = [str(p) for p in paths]
    return report


__all__ = ["FORMATS", "DatasetReport", "import_dataset"]
