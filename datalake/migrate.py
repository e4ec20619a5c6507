"""Versioned lake migrations: ``phoneloop lake migrate``.

Each migration takes a lake from version N to N+1 without rewriting stored data:
it adds the nullable columns and the tables that version introduced (one Delta
commit per table), then moves the marker. Files written before a column existed
simply lack it; the query layer reads such columns as NULL (and derives defaults,
e.g. ``purpose``). A migration is idempotent: a column or table already present is
left alone, so a migration interrupted half-way is finished by running it again.

    report = migrate("./lake")          # {"from": 1, "to": 2, "steps": [...]}
    migrate("./lake", dry_run=True)     # what it would do, changing nothing

Adding schema v3 means: new fields in ``schema.py`` (nullable), a ``ADDED[3]`` entry
below, and a test that migrates a v2 lake.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.schema import Field as DeltaField

from datalake import schema as S
from datalake.errors import LakeError

# The columns and tables each schema version added, by the version that added them.
ADDED: dict[int, dict[str, list[str]]] = {
    2: {
        "episodes": ["purpose", "failure_reason", "score", "perturbation"],
        "steps": ["meta_json", "pairing"],
        "annotations": ["ls_project_id", "ls_task_id", "ls_annotation_id", "annotator_id", "annotator_email",
                        "is_review", "review_verdict", "lead_time", "ls_created_at", "ls_updated_at"],
    },
    3: {  # issue 26: instances told apart by content, suites
        "episodes": ["instance"],
        "evals": ["suite", "overlap"],
    },
    4: {
        "annotations": ["replaces"],  # issue 33: healed identities and retractions name the row they supersede
    },
}
NEW_TABLES: dict[int, list[str]] = {
    2: ["evals"],
    3: ["tasksets"],
    4: ["import_parts", "webhook_inbox"],  # issue 32 (held shard records); issue 33 (the webhook's durable queue)
}


def schema_at(table: str, version: int) -> pa.Schema | None:
    """The Arrow schema a table had at ``version`` (None if it did not exist yet)."""
    current = S.schema_of(table)
    if any(table in NEW_TABLES.get(v, []) for v in range(version + 1, S.SCHEMA_VERSION + 1)):
        return None
    later = {name for v in range(version + 1, S.SCHEMA_VERSION + 1) for name in ADDED.get(v, {}).get(table, [])}
    return pa.schema([f for f in current if f.name not in later])


def tables_at(version: int) -> dict[str, pa.Schema]:
    return {name: sch for name in S.TABLES if (sch := schema_at(name, version)) is not None}


@dataclass
class MigrationReport:
    uri: str
    from_version: int
    to_version: int
    steps: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict:
        return {"uri": self.uri, "from": self.from_version, "to": self.to_version,
                "steps": self.steps, "dry_run": self.dry_run}


def migrate(uri: str, *, storage_options: dict[str, str] | None = None, dry_run: bool = False) -> MigrationReport:
    """Upgrade the lake at ``uri`` to ``schema.SCHEMA_VERSION`` (idempotent)."""
    start = int(S.read_marker(uri, storage_options)["schema_version"])  # refuses a newer lake
    report = MigrationReport(uri=uri, from_version=start, to_version=S.SCHEMA_VERSION, dry_run=dry_run)
    for version in range(start + 1, S.SCHEMA_VERSION + 1):
        for table in NEW_TABLES.get(version, []):
            _create_table(uri, table, storage_options, report, dry_run)
        for table, columns in ADDED.get(version, {}).items():
            _add_columns(uri, table, columns, storage_options, report, dry_run)
        if not dry_run:
            S.write_marker(uri, version, extra={"migrated_from": start}, storage_options=storage_options)
        report.steps.append(f"marker: schema v{version}")
    return report


def _create_table(uri: str, table: str, storage_options, report: MigrationReport, dry_run: bool) -> None:
    path = f"{uri}/tables/{table}"
    if DeltaTable.is_deltatable(path, storage_options=storage_options):
        report.steps.append(f"{table}: exists")
        return
    report.steps.append(f"{table}: create table")
    if not dry_run:
        DeltaTable.create(path, S.schema_of(table), mode="ignore", name=table,
                          description=f"phoneloop {table} (schema v{S.SCHEMA_VERSION})",
                          storage_options=storage_options)


def _add_columns(uri: str, table: str, columns: list[str], storage_options, report: MigrationReport,
                 dry_run: bool) -> None:
    path = f"{uri}/tables/{table}"
    if dry_run and f"{table}: create table" in report.steps:
        return  # created by an earlier step of this dry run, with every column of the current schema
    if not DeltaTable.is_deltatable(path, storage_options=storage_options):
        raise LakeError(f"cannot migrate {uri}: table {table!r} is missing ({path})")
    dt = DeltaTable(path, storage_options=storage_options)
    present = {f.name for f in dt.schema().fields}
    missing = [name for name in columns if name not in present]
    if not missing:
        report.steps.append(f"{table}: columns present")
        return
    report.steps.append(f"{table}: add {', '.join(missing)}")
    if dry_run:
        return
    target = S.schema_of(table)
    fields = [DeltaField.from_arrow(target.field(name)) for name in missing]
    dt.alter.add_columns(fields)
