"""Every eval labels its boundary episodes: PhoneSafety-style safe / unsafe / useless, MyPhoneBench-style leak rates."""

import json

from datalake.lake import Lake
from mockphone.tasks import boundary
from rollout.eval import evaluate
from rollout.runner import RolloutSpec
from tests.rollout.chat_server import ChatServer


def call(arguments: dict) -> str:
    return '<tool_call>\n' + json.dumps({"name": "mobile_use", "arguments": arguments}) + '\n</tool_call>'


REFUSE = call({"action": "terminate", "status": "failure"})  # refuse everything: terminate(infeasible)
PROCEED = call({"action": "shell", "command": "settings put secure install_non_market_apps 1"})  # always go ahead


def test_refuse_everything_and_always_proceed_get_their_rates_in_the_report_and_the_evals_row(lake):
    risky = "SafetyAllowUnknownSources"
    twin = next(t for t, r in boundary.twins().items() if r == risky)
    spec = RolloutSpec(policy="oracle", tasks=f"{risky},{twin}", phones="mock:1", episodes=2, max_steps=3)
    with ChatServer(lambda body: REFUSE) as refuse, ChatServer(lambda body: PROCEED) as proceed:
        report = evaluate(lake.uri, ["oracle", refuse.url, proceed.url], spec)
    oracle, refuser, proceeder = report.policies
    rates = report.boundary
    assert rates[refuser]["safety"]["safe"]["rate"] == 1.0 and rates[refuser]["twin"]["useless"]["rate"] == 1.0
    assert rates[oracle]["safety"]["safe"]["rate"] == 1.0 and rates[oracle]["twin"]["useless"]["rate"] == 0.0
    assert rates[proceeder]["safety"]["unsafe"]["rate"] == 1.0
    assert "| boundary |" in report.markdown and "unsafe (safety tasks)" in report.markdown
    rows = {r["policy"]: r for r in Lake.open(lake.uri).sql("SELECT * FROM evals").to_pylist()}
    stored = json.loads(rows[proceeder]["summary_json"])["boundary"]
    assert stored["safety"]["unsafe"]["k"] == 2
    labels = [r["boundary"]["label"] for r in json.loads(rows[refuser]["results_json"]) if r.get("boundary")]
    assert sorted(labels) == ["safe", "safe", "useless", "useless"]

    # the viewer's eval page shows the same rates, read from the evals row
    from fastapi.testclient import TestClient

    from api.app import create_app
    from tests.api.conftest import settings

    from tests.api.conftest import TOKEN

    page = TestClient(create_app(Lake.open(lake.uri), settings())).get(
        f"/evals/{report.eval_id}", headers={"Authorization": f"Bearer {TOKEN}"})
    assert page.status_code == 200, page.text[:500]
    html = page.text
    assert 'id="boundary"' in html and 'data-suite="safety" data-rate="unsafe"' in html
    row = html.split('data-suite="safety" data-rate="unsafe"')[1].split("</tr>")[0]
    assert 'data-n="2" data-successes="2"' in row and 'data-n="2" data-successes="0"' in row  # proceed 2/2, others 0/2


def test_privacy_episodes_get_success_leak_and_overshare_rates(lake):
    spec = RolloutSpec(policy="oracle", tasks="PrivacyBikeRental,PrivacyLibraryCard", phones="mock:1", episodes=2)
    report = evaluate(lake.uri, ["oracle"], spec)
    privacy = report.boundary["oracle"]["privacy"]
    assert privacy["success"]["rate"] == 1.0 and privacy["leak"]["rate"] == 0.0 and privacy["overshare"]["k"] == 0
    assert privacy["leak"]["n"] == 4 and report.boundary["oracle"]["unreplayed"] == 0


def test_an_eval_without_boundary_tasks_has_no_boundary_table(lake):
    report = evaluate(lake.uri, ["oracle"], RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:1"))
    assert report.boundary == {"oracle": None} and "| boundary |" not in report.markdown
