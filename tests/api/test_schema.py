"""Property-based checks of every documented route against the OpenAPI schema (schemathesis).

Bounded: a few examples per operation and a per-example deadline, so the run stays in seconds.
Reads need the token here too (``auth_reads``), so the schema's security is true of every
route and schemathesis can check that unauthenticated calls fail.
The app is built at import because schemathesis reads its schema while collecting
(its lazy ``from_fixture`` loader does not work with this pytest); the lake lives in a
temporary folder removed at exit.
"""

import atexit
import shutil
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from api.app import create_app
from tests.api.conftest import AUTH, SECRET, build_lake
from tests.api.conftest import settings as api_settings

HEADERS = {**AUTH, "X-Webhook-Secret": SECRET}
_folder = tempfile.mkdtemp(prefix="phoneloop-schema-")
atexit.register(shutil.rmtree, _folder, True)
app = create_app(build_lake(Path(_folder) / "lake"), api_settings(sql_timeout_s=1.0, auth_reads=True))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=10, deadline=20_000, database=None, suppress_health_check=list(HealthCheck))  # POST /api/sql runs
# each query in a child process: seconds on a loaded 2-core machine
def test_api_conforms_to_its_schema(case):
    # The fixed headers make every request authenticated, so a "negative" case whose only flaw was
    # its Authorization header is valid after all; and a schema-valid SQL text or webhook body can
    # still be refused by the domain (400/422). Every other check runs: no 5xx, documented status
    # codes, content types and response bodies, and 401 without credentials.
    excluded = [negative_data_rejection]
    if case.operation.path in ("/api/sql", "/webhooks/label-studio"):
        excluded.append(positive_data_acceptance)
    case.call_and_validate(headers=HEADERS, excluded_checks=excluded)
