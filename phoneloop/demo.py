"""The embedded default: one round of the data loop on a local lake and mock phones.

1. Lake: create ``./lake`` (or open it: the demo is safe to run again).
2. Real side: import the bundled sample of real-phone episodes (interchange format).
3. Mock side: collect oracle demonstrations on a MockPhone for a spread of tasks in the
   three evaluation categories (single-app, cross-app, mini-app); the task verifier
   sets each outcome. Episode ids come from the content, so a rerun adds nothing.
4. Curate: build ``examples/recipes/default.yaml`` into ``default@vN`` (filters, dedup,
   redaction, real:mock mixing, split, sft/grpo/episodes exports). If the lake has not
   changed since the latest version of that recipe, that version is reused.
5. Summarise: episodes and success rate per source, phone and category, and the dataset.

Each step is one library call; later rounds add training and rollouts on the same lake.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from collectors import OraclePolicy, collect
from curation.build import READ_TABLES, curate
from curation.recipe import load_recipe
from curation.versions import DatasetVersion, list_versions
from datalake import interchange
from datalake.lake import Lake
from mockphone.phone import MockPhone

DEFAULT_RECIPE = Path(__file__).resolve().parent.parent / "examples" / "recipes" / "default.yaml"
DEMO_TASKS = (
    "SettingsWifiOn", "SettingsDarkThemeOn", "ClockAddAlarm", "ContactsAdd", "NotesCreate", "MessagesSend",
    "ShopSearchPriceRange", "ShopBuyBestRatedUnder", "CalendarCreateEvent", "MailSend",
    "CrossLeaveRequestToMail", "CrossContactNumberToNote", "CrossEventToAlarm",
    "HotelBookWithinBudget", "HotelSearchBudget", "FoodOrderCheapestDish",
)
SUMMARY = """
SELECT e.source, e.phone, coalesce(e.category, '-') AS category, count(*) AS episodes, sum(s.n)::BIGINT AS steps,
       round(avg(CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END), 3)::DOUBLE AS success_rate
FROM episodes e JOIN (SELECT episode_id, count(*) AS n FROM steps GROUP BY episode_id) s USING (episode_id)
GROUP BY ALL ORDER BY source, phone, category
"""

Say = Callable[[str], None]


def run(lake_uri: str, *, recipe: Path = DEFAULT_RECIPE, tasks: tuple[str, ...] = DEMO_TASKS,
        seeds: tuple[int, ...] = (0,), say: Say = lambda message: None) -> dict[str, Any]:
    lake = Lake.init(lake_uri)
    say(f"lake {lake.uri}")

    sample = resources.files("phoneloop") / "sample" / "episodes.jsonl"
    with resources.as_file(sample) as path:
        imported = interchange.import_files(lake, [path])
    say(f"real: imported {imported.written} sample episodes ({imported.skipped} already there)")

    phone = MockPhone()
    try:
        collected = collect(lake, phone, OraclePolicy.factory, list(tasks), seeds=seeds)
    finally:
        phone.close()
    say(f"mock: {collected.episodes} oracle episodes on mock phones, {collected.written} new, "
        f"outcomes {collected.outcomes}")

    dataset = _curate(lake, load_recipe(recipe), say)
    summary = lake.sql(SUMMARY).to_pylist()
    return {"lake": lake.uri, "imported": imported.written, "collected": collected.episodes,
            "collected_new": collected.written, "quarantined": imported.quarantined + collected.quarantined,
            "dataset": dataset.to_dict(), "summary": summary}


def _curate(lake: Lake, recipe, say: Say) -> DatasetVersion:
    versions = lake.versions()
    for previous in reversed(list_versions(lake, recipe.name)):
        if previous.recipe == recipe.text and previous.table_versions == {t: versions[t] for t in READ_TABLES}:
            say(f"dataset: {previous.ref} is up to date")
            return previous
    dataset = curate(lake, recipe)
    say(f"dataset: built {dataset.ref} ({dataset.counts['episodes']} episodes, {dataset.counts['steps']} steps)")
    return dataset
