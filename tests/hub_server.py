"""A loopback Hugging Face Hub: the slice of the Hub's HTTP API that `huggingface_hub` and `datasets` use.

It speaks the classic (non-Xet) protocol, so clients must run with `HF_HUB_DISABLE_XET=1` set before
`huggingface_hub` is imported. Implemented, for dataset (and model) repos:

    POST /api/repos/create                                    create a repo (409 if it exists)
    GET  /api/{type}s/{repo}[/revision/{rev}]                 repo info (sha, siblings)
    GET  /api/{type}s/{repo}/refs                             branches and tags
    POST /api/validate-yaml                                   README front matter must be a YAML mapping
    GET  /api/agent-harnesses                                 empty registry (fetched by the client for its User-Agent)
    POST /api/{type}s/{repo}/preupload/{rev}                  binary or large files -> "lfs", text -> "regular"
    POST /{prefix}{repo}.git/info/lfs/objects/batch           LFS batch: upload + verify actions
    PUT  /_lfs/{sha256}          POST /_lfs/{sha256}/verify   LFS object storage (sha256 and size checked)
    POST /api/{type}s/{repo}/commit/{rev}                     NDJSON commit: header, file, lfsFile, deletedFile/Folder
    POST /api/{type}s/{repo}/tag/{rev}                        create a tag (409 if it exists)
    GET  /api/{type}s/{repo}/tree/{rev}[/{path}]              tree listing (recursive or one level)
    POST /api/{type}s/{repo}/paths-info/{rev}                 info for given paths (form-encoded)
    GET|HEAD /{prefix}{repo}/resolve/{rev}/{path}             file download with X-Repo-Commit, ETag,
                                                              X-Linked-Etag/X-Linked-Size (no Range)

Writes (and reads of private repos) need `Authorization: Bearer <token>` with the server's token, else 401.
State lives in memory: repos -> commits -> {path: file}. Every request is recorded in `HubServer.requests`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

LFS_SUFFIXES = (".parquet", ".arrow", ".png", ".jpg", ".zip", ".bin")
REGULAR_MAX_SIZE = 10 * 1024 * 1024


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class StoredFile:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def etag(self) -> str:
        """What the Hub puts in ETag: the sha256 for LFS files, the git blob id otherwise."""
        return self.sha256 if self.lfs else git_blob_oid(self.data)


@dataclass(frozen=True)
class Commit:
    oid: str
    message: str
    files: dict[str, StoredFile]


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str | None] = field(default_factory=lambda: {"main": None})
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        """A branch, a tag or a full commit id -> the commit; None when unknown (or the branch is empty)."""
        oid = self.branches.get(revision) or self.tags.get(revision) or revision
        if oid in self.commits:
            return self.commits[oid]
        return None

    def files_at(self, revision: str) -> dict[str, StoredFile]:
        commit = self.resolve(revision)
        return commit.files if commit else {}


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, **extra):
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


class HubState:
    """The Hub's data: repos, uploaded LFS objects, the token that may write."""

    def __init__(self, token: str):
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.lock = threading.Lock()

    def repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            raise HubError(404, f"Repository {repo_id} not found", "RepoNotFound")
        return repo

    def commit(self, repo: Repo, branch: str, message: str, lines: list[dict]) -> Commit:
        if branch not in repo.branches:
            raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        files = dict(repo.files_at(branch))
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "file":
                files[value["path"]] = StoredFile(base64.b64decode(value["content"]), lfs=False)
            elif key == "lfsFile":
                data = self.lfs_objects.get(value["oid"])
                if data is None:
                    raise HubError(422, f"LFS object {value['oid']} for {value['path']} was never uploaded")
                files[value["path"]] = StoredFile(data, lfs=True)
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: f for p, f in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(400, f"Unsupported commit operation {key!r}")
        oid = hashlib.sha1(os.urandom(20)).hexdigest()  # unique across servers, so client caches never collide
        repo.commits[oid] = Commit(oid, message, files)
        repo.branches[branch] = oid
        return repo.commits[oid]


def tree_entries(files: dict[str, StoredFile], base: str, recursive: bool) -> list[dict]:
    """Files and folders under `base` ("" = root), the way /tree and /paths-info describe them."""
    prefix = base.strip("/") + "/" if base.strip("/") else ""
    entries: dict[str, dict] = {}
    for path in sorted(files):
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        for depth in range(1, len(parts)):
            folder = prefix + "/".join(parts[:depth])
            entries.setdefault(folder, folder_entry(folder))
            if not recursive:
                break
        if recursive or len(parts) == 1:
            entries[path] = file_entry(path, files[path])
    return list(entries.values())


def file_entry(path: str, stored: StoredFile) -> dict:
    entry = {"type": "file", "path": path, "size": len(stored.data), "oid": git_blob_oid(stored.data)}
    if stored.lfs:
        entry["lfs"] = {"oid": stored.sha256, "size": len(stored.data), "pointerSize": 134}
    return entry


def folder_entry(path: str) -> dict:
    return {"type": "directory", "path": path, "size": 0, "oid": hashlib.sha1(path.encode()).hexdigest()}


REPO = r"(?P<type>model|dataset|space)s/(?P<repo>[^/]+/[^/]+)"  # as in /api/datasets/{repo}/...
FILES = r"/(?P<prefix>datasets/|spaces/)?(?P<repo>[^/]+/[^/]+)"  # as in /datasets/{repo}/resolve/... (no prefix: model)
ROUTES: list[tuple[str, re.Pattern, str]] = [
    (m, re.compile(p), name)
    for m, p, name in [
        ("POST", r"/api/repos/create", "create_repo"),
        ("POST", r"/api/validate-yaml", "validate_yaml"),
        ("GET", r"/api/agent-harnesses", "agent_harnesses"),
        ("GET", rf"/api/{REPO}/refs", "refs"),
        ("GET", rf"/api/{REPO}(?:/revision/(?P<rev>[^/]+))?", "repo_info"),
        ("POST", rf"/api/{REPO}/preupload/(?P<rev>[^/]+)", "preupload"),
        ("POST", rf"/api/{REPO}/commit/(?P<rev>[^/]+)", "commit"),
        ("POST", rf"/api/{REPO}/tag/(?P<rev>[^/]+)", "create_tag"),
        ("GET", rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", "tree"),
        ("POST", rf"/api/{REPO}/paths-info/(?P<rev>[^/]+)", "paths_info"),
        ("POST", rf"{FILES}\.git/info/lfs/objects/batch", "lfs_batch"),
        ("PUT", r"/_lfs/(?P<oid>[0-9a-f]{64})", "lfs_put"),
        ("POST", r"/_lfs/(?P<oid>[0-9a-f]{64})/verify", "lfs_verify"),
        ("GET", rf"{FILES}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "resolve"),
        ("HEAD", rf"{FILES}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "resolve"),
    ]
]
WRITES = {"create_repo", "preupload", "commit", "create_tag", "lfs_batch", "validate_yaml"}


class HubHandler(BaseHTTPRequestHandler):
    """Routes a request to a `do_<route>` method; each returns (status, body, headers)."""

    protocol_version = "HTTP/1.1"
    server: "HubServer"

    def log_message(self, format, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self._dispatch(self.command)

    do_HEAD = do_POST = do_PUT = do_GET

    # --- plumbing ---------------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.body = self._read_body()
        self.server.requests.append((method, url.path))
        for route_method, pattern, name in ROUTES:
            match = pattern.fullmatch(url.path)
            if route_method == method and match:
                args = {k: unquote(v) if v else v for k, v in match.groupdict().items()}
                try:
                    self._check_auth(name, args)
                    with self.server.state.lock:
                        status, body, headers = getattr(self, f"do_{name}")(**args)
                except HubError as e:
                    status, body = e.status, {"error": e.message, **e.extra}
                    headers = {"X-Error-Code": e.code} if e.code else {}
                return self._send(method, status, body, headers)
        self._send(method, 404, {"error": f"loopback hub does not implement {method} {url.path}"}, {})

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _check_auth(self, route: str, args: dict) -> None:
        given = self.headers.get("Authorization", "")
        authorized = given == f"Bearer {self.server.state.token}"
        if given and not authorized:
            raise HubError(401, "Invalid credentials in Authorization header")
        if route in WRITES and not authorized:
            raise HubError(401, "You must be authenticated to do this")
        if route in ("repo_info", "tree", "paths_info", "refs", "resolve") and not authorized:
            repo = self.server.state.repos.get((args.get("type") or self._type(args), args["repo"]))
            if repo is not None and repo.private:
                raise HubError(404, f"Repository {args['repo']} not found", "RepoNotFound")

    def _send(self, method: str, status: int, body, headers: dict) -> None:
        if isinstance(body, bytes):
            payload = body
        else:
            payload = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **headers}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    @staticmethod
    def _type(args: dict) -> str:
        return {"datasets/": "dataset", "spaces/": "space"}.get(args.get("prefix") or "", "model")

    @property
    def state(self) -> HubState:
        return self.server.state

    @property
    def base(self) -> str:
        return self.server.url

    # --- routes -----------------------------------------------------------------------------------

    def do_create_repo(self):
        payload = json.loads(self.body)
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload['organization'] or 'user'}/{payload['name']}"
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.base}/{prefix}{repo_id}"
        if (repo_type, repo_id) in self.state.repos:  # the Hub still names the repo: create_repo(exist_ok) reads it
            raise HubError(409, f"You already created this {repo_type} repo", url=url)
        private = payload.get("private") is True or payload.get("visibility") == "private"
        self.state.repos[(repo_type, repo_id)] = Repo(repo_type, repo_id, private)
        return 200, {"url": url, "name": repo_id}, {}

    def do_validate_yaml(self):
        content = json.loads(self.body)["content"]
        match = re.match(r"^---\n(.*?)\n---", content, re.S)
        try:
            metadata = yaml.safe_load(match.group(1)) if match else {}
        except yaml.YAMLError as e:
            return 400, {"errors": [{"message": f"Invalid YAML: {e}"}], "warnings": []}, {}
        if not isinstance(metadata, dict):
            return 400, {"errors": [{"message": "metadata must be a mapping"}], "warnings": []}, {}
        return 200, {"errors": [], "warnings": []}, {}

    def do_agent_harnesses(self):
        """huggingface_hub fetches this registry once a day to tag its User-Agent; an empty one detects nothing."""
        return 200, {"standardEnvVars": [], "harnesses": {}}, {}

    def do_refs(self, type, repo):
        r = self.state.repo(type, repo)

        def refs(kind: str, names: dict[str, str | None]) -> list[dict]:
            return [{"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": oid} for n, oid in names.items() if oid]

        return 200, {"branches": refs("heads", r.branches), "tags": refs("tags", r.tags), "converts": []}, {}

    def do_repo_info(self, type, repo, rev=None):
        r = self.state.repo(type, repo)
        commit = r.resolve(rev or "main")
        if rev and commit is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = commit.files if commit else {}
        siblings = [{"rfilename": p} for p in sorted(files)]
        info = {"id": repo, "private": r.private, "sha": commit.oid if commit else None, "siblings": siblings}
        return 200, info, {}

    def do_preupload(self, type, repo, rev):
        files = self.state.repo(type, repo).files_at(rev)
        answer = []
        for f in json.loads(self.body)["files"]:
            sample = base64.b64decode(f["sample"])
            lfs = f["path"].endswith(LFS_SUFFIXES) or b"\0" in sample or f["size"] > REGULAR_MAX_SIZE
            existing = files.get(f["path"])
            oid = (existing.sha256 if lfs else git_blob_oid(existing.data)) if existing else None
            mode = "lfs" if lfs else "regular"
            answer.append({"path": f["path"], "uploadMode": mode, "shouldIgnore": False, "oid": oid})
        return 200, {"files": answer}, {}

    def do_lfs_batch(self, prefix, repo):
        self.state.repo(self._type({"prefix": prefix}), repo)
        objects = []
        for obj in json.loads(self.body)["objects"]:
            answer = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.state.lfs_objects:
                answer["actions"] = {
                    "upload": {"href": f"{self.base}/_lfs/{obj['oid']}"},
                    "verify": {"href": f"{self.base}/_lfs/{obj['oid']}/verify"},
                }
            objects.append(answer)
        return 200, {"transfer": "basic", "objects": objects}, {}

    def do_lfs_put(self, oid):
        if hashlib.sha256(self.body).hexdigest() != oid:
            raise HubError(400, f"Uploaded content does not match sha256 {oid}")
        self.state.lfs_objects[oid] = self.body
        return 200, b"", {}

    def do_lfs_verify(self, oid):
        payload = json.loads(self.body)
        data = self.state.lfs_objects.get(oid)
        if data is None or len(data) != payload["size"]:
            raise HubError(404, f"LFS object {oid} missing or wrong size")
        return 200, {"message": "Everything good"}, {}

    def do_commit(self, type, repo, rev):
        r = self.state.repo(type, repo)
        lines = [json.loads(line) for line in self.body.splitlines() if line.strip()]
        header, operations = lines[0], lines[1:]
        if header["key"] != "header":
            raise HubError(400, "The first NDJSON line must be the header")
        parent = header["value"].get("parentCommit")
        if parent and parent != r.branches.get(rev):
            raise HubError(412, f"parentCommit {parent} is not the head of {rev}")
        commit = self.state.commit(r, rev, header["value"]["summary"], operations)
        prefix = "" if type == "model" else f"{type}s/"
        url = f"{self.base}/{prefix}{repo}/commit/{commit.oid}"
        return 200, {"commitUrl": url, "commitOid": commit.oid, "success": True, "pullRequestUrl": None}, {}

    def do_create_tag(self, type, repo, rev):
        r = self.state.repo(type, repo)
        tag = json.loads(self.body)["tag"]
        if tag in r.tags:
            raise HubError(409, f"Tag {tag} already exists")
        commit = r.resolve(rev)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        r.tags[tag] = commit.oid
        return 200, {}, {}

    def do_tree(self, type, repo, rev, path=None):
        r = self.state.repo(type, repo)
        if r.resolve(rev) is None and rev not in r.branches:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        entries = tree_entries(r.files_at(rev), path or "", self.query.get("recursive") in ("True", "true", "1"))
        if path and not entries:
            raise HubError(404, f"{path} does not exist on {rev}", "EntryNotFound")
        return 200, entries, {}

    def do_paths_info(self, type, repo, rev):
        files = self.state.repo(type, repo).files_at(rev)
        answer = []
        for path in parse_qs(self.body.decode()).get("paths", []):
            if path in files:
                answer.append(file_entry(path, files[path]))
            elif any(p.startswith(path.rstrip("/") + "/") for p in files):
                answer.append(folder_entry(path))
        return 200, answer, {}

    def do_resolve(self, prefix, repo, rev, path):
        r = self.state.repo(self._type({"prefix": prefix}), repo)
        commit = r.resolve(rev)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        stored = commit.files.get(path)
        if stored is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{stored.etag}"', "Content-Length": str(len(stored.data))}
        if stored.lfs:  # the Hub redirects LFS files to a CDN and names the linked object in these headers
            headers.update({"X-Linked-Etag": f'"{stored.sha256}"', "X-Linked-Size": str(len(stored.data))})
        return 200, stored.data, headers


class HubServer(ThreadingHTTPServer):
    """The loopback Hub on 127.0.0.1:<free port>; use as a context manager or start()/stop()."""

    daemon_threads = True

    def __init__(self, token: str = "hf_loopback_token"):
        super().__init__(("127.0.0.1", 0), HubHandler)
        self.state = HubState(token)
        self.requests: list[tuple[str, str]] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, name="loopback-hub", daemon=True)

    @property
    def token(self) -> str:
        return self.state.token

    def start(self) -> "HubServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
