"""The Dockerfile's recipe, run without a container engine.

There is no Docker on the machines that run these tests, so the slow test reads the ``Dockerfile``
and carries out its two stages itself: ``ARG``/``ENV``/``WORKDIR`` set the environment, ``COPY``
copies (after checking ``.dockerignore`` lets the sources through), each ``RUN`` of the build stage
runs with ``sh -c`` exactly as written, and the runtime stage's ``CMD`` and ``HEALTHCHECK`` run
against the result. Container paths (``/opt``, ``/index``, ``/corpus`` ...) are mapped into a
temporary directory, and the build context (``/src``) is the repository. What the test changes, and
why: the HTTP port (0, a free one) and bind address (127.0.0.1, loopback only on a shared machine);
``UV_LINK_MODE`` and ``UV_COMPILE_BYTECODE`` (speed only: they exist for the BuildKit cache mount and
the image's start-up); ``UV_OFFLINE`` (everything comes from uv's cache); the unprivileged user
(tests run as whoever runs them). The fast tests check the Dockerfile's contract statically.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAI
from tests.support.workflows import REPO_COMMANDS, CommandChecker, load_workflow, shell_commands

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
COMPOSE = REPO_ROOT / "docker-compose.yml"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # python:*-slim's PATH
STEP_TIMEOUT = 240.0
SERVER_TIMEOUT = 60.0
GIT_COMMIT = "0123456789abcdef0123456789abcdef01234567"
BUILD_DATE = "2026-01-02T03:04:05Z"
SERVER_CMD = [
    "docs-mcp-server",
    "--index-dir",
    "/index",
    "--transport",
    "http",
    "--host",
    "0.0.0.0",
    "--port",
    "20310",
]


def _load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_scripts_{name}", REPO_ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mcp_smoke = _load_script("mcp_smoke")


# --- reading the Dockerfile -------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    name: str
    base: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def one(self, keyword: str) -> Instruction:
        (found,) = self.all(keyword)
        return found


@dataclass
class Dockerfile:
    global_args: list[Instruction]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        (found,) = [s for s in self.stages if s.name == name]
        return found


def parse_dockerfile(text: str) -> Dockerfile:
    """Instructions with continuation lines joined and comment lines dropped."""
    logical: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # Docker drops comment lines inside a continued instruction too
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append((start, pending + stripped))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued instruction"
    global_args: list[Instruction] = []
    stages: list[Stage] = []
    for number, line in logical:
        keyword, _, args = line.partition(" ")
        instruction = Instruction(keyword.upper(), args.strip(), number)
        if instruction.keyword == "FROM":
            match = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", instruction.args, re.IGNORECASE)
            assert match, f"line {number}: cannot read FROM {instruction.args}"
            stages.append(Stage(name=match.group(2) or str(len(stages)), base=match.group(1)))
        elif stages:
            stages[-1].instructions.append(instruction)
        else:
            global_args.append(instruction)
    return Dockerfile(global_args, stages)


def parse_assignments(args: str) -> dict[str, str]:
    """``ARG A=1`` / ``ENV A=1 B="x y"`` (an ARG without a default is empty)."""
    values: dict[str, str] = {}
    for token in shlex.split(args):
        name, _, value = token.partition("=")
        values[name] = value
    return values


def expand(text: str, variables: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` as Docker expands them in ENV, COPY, FROM and friends."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), ""), text)


def split_flags(args: str) -> tuple[list[str], str]:
    """Leading ``--mount=...``/``--from=...`` flags of RUN and COPY, and the rest."""
    flags: list[str] = []
    rest = args
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        flags.append(flag)
        rest = rest.lstrip()
    return flags, rest


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), f"not exec form: {args}"
    return value


def healthcheck_command(args: str) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    rest = args
    while rest.startswith("--"):
        option, _, rest = rest.partition(" ")
        name, _, value = option[2:].partition("=")
        options[name] = value
        rest = rest.lstrip()
    keyword, _, command = rest.partition(" ")
    assert keyword == "CMD", f"HEALTHCHECK must use CMD, got {rest}"
    return options, exec_form(command)


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return parse_dockerfile(DOCKERFILE.read_text("utf-8"))


# --- .dockerignore ----------------------------------------------------------------------------------


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out += "(?:.*/)?"
            index += 3
            continue
        if pattern.startswith("**", index):
            out += ".*"
            index += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(char) or re.escape(char)
        index += 1
    return re.compile(out)


def dockerignore_excludes(path: str, patterns: list[str] | None = None) -> bool:
    """Whether Docker leaves ``path`` (relative to the context) out, with its parents' rules applied."""
    if patterns is None:
        lines = DOCKERIGNORE.read_text("utf-8").splitlines()
        patterns = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    parts = path.strip("/").split("/")
    excluded = False
    for depth in range(1, len(parts) + 1):
        candidate = "/".join(parts[:depth])
        for pattern in patterns:
            negate = pattern.startswith("!")
            body = pattern[1:] if negate else pattern
            if _pattern_regex(body.strip("/")).fullmatch(candidate):
                excluded = not negate
        if excluded:
            return True
    return excluded


# --- static checks ----------------------------------------------------------------------------------


def test_two_stages_from_a_slim_python(dockerfile: Dockerfile) -> None:
    versions = {k: v for i in dockerfile.global_args for k, v in parse_assignments(i.args).items()}
    assert versions.get("PYTHON_VERSION") in {"3.11", "3.12"}
    assert [(s.name, s.base) for s in dockerfile.stages] == [
        ("build", "python:${PYTHON_VERSION}-slim"),
        ("runtime", "python:${PYTHON_VERSION}-slim"),
    ]


def test_uv_is_pinned_to_the_version_ci_uses(dockerfile: Dockerfile) -> None:
    build = dockerfile.stage("build")
    pinned = {k: v for i in build.all("ARG") for k, v in parse_assignments(i.args).items()}["UV_VERSION"]
    assert any('"uv==${UV_VERSION}"' in i.args and "pip install" in i.args for i in build.all("RUN"))
    for workflow in ("ci.yml", "release.yml"):
        assert load_workflow(REPO_ROOT / ".github" / "workflows" / workflow)["env"]["UV_VERSION"] == pinned


def test_build_stage_indexes_the_corpus_with_an_optional_openai_secret(dockerfile: Dockerfile) -> None:
    build = dockerfile.stage("build")
    args = {k: v for i in build.all("ARG") for k, v in parse_assignments(i.args).items()}
    assert args["DOCS_DIR"] == "examples/docs" and (REPO_ROOT / args["DOCS_DIR"]).is_dir()
    assert args["EMBEDDING_PROVIDER"] == "headings"  # the image searches as docs-mcp build's default does
    (index_run,) = [i for i in build.all("RUN") if "docs-mcp build" in i.args]
    flags, command = split_flags(index_run.args)
    assert "--mount=type=secret,id=openai_api_key" in flags
    assert "/run/secrets/openai_api_key" in command and "OPENAI_API_KEY" in command
    assert '--embedding-provider "${EMBEDDING_PROVIDER}"' in command
    assert "--out /index" in command and "--docs-dir /corpus" in command
    assert any(i.args == "${DOCS_DIR} /corpus" for i in build.all("COPY"))


@pytest.mark.integration
def test_every_docs_mcp_command_in_the_dockerfile_exists(dockerfile: Dockerfile) -> None:
    checker = CommandChecker()
    for stage in dockerfile.stages:
        for instruction in stage.all("RUN"):
            for command in shell_commands(split_flags(instruction.args)[1]):
                name = Path(command[0]).name
                if name in REPO_COMMANDS:
                    checker.check([name, *command[1:]], f"Dockerfile:{instruction.line}")
    checker.check(SERVER_CMD, "Dockerfile CMD")
    assert checker.problems == []
    assert len(checker.checked) == 2


def test_runtime_stage_runs_the_server_unprivileged(dockerfile: Dockerfile) -> None:
    runtime = dockerfile.stage("runtime")
    assert exec_form(runtime.one("CMD").args) == SERVER_CMD
    assert runtime.one("EXPOSE").args == "20310"
    user = runtime.one("USER").args
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "numeric, non-root"
    (useradd,) = [i for i in runtime.all("RUN") if "useradd" in i.args]
    assert f"--uid {uid}" in useradd.args and "--no-create-home" in useradd.args
    # Only the server's environment and the index come from the build stage; no installer at run time.
    copies = [split_flags(i.args) for i in runtime.all("COPY")]
    assert copies == [(["--from=build"], "/opt/docs-mcp /opt/docs-mcp"), (["--from=build"], "/index /index")]
    assert not any(re.search(r"\b(pip|uv)\b", i.args) for i in runtime.all("RUN"))
    env = parse_assignments(" ".join(i.args for i in runtime.all("ENV")))
    assert env["PATH"].startswith("/opt/docs-mcp/bin:")


def test_healthcheck_uses_python_not_curl(dockerfile: Dockerfile) -> None:
    options, command = healthcheck_command(dockerfile.stage("runtime").one("HEALTHCHECK").args)
    assert command[:2] == ["python", "-c"]
    assert "urllib.request" in command[2] and "http://127.0.0.1:20310/healthz" in command[2]
    assert not re.search(r"\b(curl|wget)\b", command[2])
    assert {"interval", "timeout", "start-period", "retries"} <= set(options)


def test_dockerignore_keeps_secrets_and_debris_out_but_lets_the_recipe_in(dockerfile: Dockerfile) -> None:
    for excluded in (
        ".git/HEAD",
        ".venv/bin/python",
        "packages/core/src/docs_mcp_core/__pycache__/x.pyc",
        ".env",
        "examples/docs/.env",
        "examples/docs/.lancedb/chunks.lance",
        "dist/docs_mcp_core-0.1.0-py3-none-any.whl",
        "tests/test_packaging.py",
    ):
        assert dockerignore_excludes(excluded), excluded
    sources = ["examples/docs/.docs-mcp.json", "examples/docs/guides/retries.md"]
    for instruction in dockerfile.stage("build").all("COPY"):
        *paths, _ = shlex.split(expand(instruction.args, {"DOCS_DIR": "examples/docs"}))
        sources.extend(paths)
    for source in sources:
        assert (REPO_ROOT / source).exists(), source
        assert not dockerignore_excludes(source), source
    for path in (REPO_ROOT / "packages").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            assert not dockerignore_excludes(str(path.relative_to(REPO_ROOT))), path


def test_dockerignore_matcher_follows_docker_rules() -> None:
    patterns = ["**/.lancedb", "build", "*.md", "!README.md"]
    assert dockerignore_excludes("docs/x/.lancedb/data", patterns)
    assert dockerignore_excludes("build/lib/x.py", patterns)
    assert not dockerignore_excludes("docs/build/x.md.txt", patterns)
    assert dockerignore_excludes("CHANGES.md", patterns)
    assert not dockerignore_excludes("README.md", patterns)


@pytest.mark.integration
def test_compose_serves_the_image_on_20310(dockerfile: Dockerfile) -> None:
    compose = yaml.safe_load(COMPOSE.read_text("utf-8"))
    server = compose["services"]["server"]
    assert server["build"]["context"] == "."
    assert server["ports"] == ["20310:20310"]
    known = {k for s in dockerfile.stages for i in s.all("ARG") for k in parse_assignments(i.args)}
    assert set(server["build"]["args"]) <= known
    assert (REPO_ROOT / server["build"]["args"]["DOCS_DIR"]).is_dir()
    help_text = subprocess.run(
        [str(Path(sys.executable).parent / "docs-mcp-server"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for name in server["environment"]:
        assert name in help_text, f"docs-mcp-server does not read {name}"
    assert server["read_only"] is True and server["tmpfs"] == ["/tmp"]


def _help(program: str, *args: str) -> str:
    return subprocess.run(
        [str(Path(sys.executable).parent / program), *args, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "COLUMNS": "400"},
    ).stdout


@pytest.mark.integration
def test_compose_object_store_example_is_consistent(dockerfile: Dockerfile) -> None:
    """The ``objstore`` profile: MinIO, a bucket, a publish job from the build stage and a replica
    of the image, agreeing on the bucket, the prefix and the credentials; off by default."""
    compose = yaml.safe_load(COMPOSE.read_text("utf-8"))
    services = compose["services"]
    example = {"minio", "bucket", "publish", "replica"}
    assert example <= set(services)
    for name in example:
        assert services[name]["profiles"] == ["objstore"], name  # `docker compose up` runs the server alone
    assert "profiles" not in services["server"]
    for name in ("minio", "bucket"):
        assert not services[name]["image"].endswith(":latest") and ":" in services[name]["image"]
    assert services["minio"]["healthcheck"]["test"]
    assert services["bucket"]["depends_on"] == {"minio": {"condition": "service_healthy"}}
    assert services["publish"]["depends_on"] == {"bucket": {"condition": "service_completed_successfully"}}
    assert services["replica"]["depends_on"] == {"publish": {"condition": "service_completed_successfully"}}

    # the publish job runs the Dockerfile's build stage, where the indexer and the corpus are
    publish = services["publish"]
    assert publish["build"]["target"] in {stage.name for stage in dockerfile.stages}
    program, command, *flags = publish["command"]
    assert program == "/opt/indexer/bin/docs-mcp" and command == "build"
    build_stage = "\n".join(i.args for i in dockerfile.stage(publish["build"]["target"]).instructions)
    assert "/opt/indexer" in build_stage and "/corpus" in build_stage
    build_help = _help("docs-mcp", "build")
    for flag in flags[::2]:
        assert flag in build_help, f"docs-mcp build has no {flag}"
    out = flags[flags.index("--out") + 1]

    replica = services["replica"]
    assert replica["image"] == services["server"]["image"]
    server_program, *server_flags = replica["command"]
    assert server_program == "docs-mcp-server"
    server_help = _help("docs-mcp-server")
    for flag in (f for f in server_flags if f.startswith("--")):
        assert flag in server_help, f"docs-mcp-server has no {flag}"
    assert server_flags[server_flags.index("--index-dir") + 1] == out  # serves what the job publishes
    assert replica["environment"]["STATELESS"] == "true"
    assert server_flags[server_flags.index("--index-cache-dir") + 1].startswith("/tmp/")  # the tmpfs
    assert replica["read_only"] is True and replica["tmpfs"] == ["/tmp"]

    # one bucket, one endpoint, one set of credentials
    bucket = out.removeprefix("s3://").split("/", 1)[0]
    assert services["bucket"]["command"][-1] == f"local/{bucket}"
    minio_env = services["minio"]["environment"]
    for env in (publish["environment"], replica["environment"]):
        assert env["AWS_ENDPOINT_URL"] == "http://minio:9000"
        assert env["AWS_ACCESS_KEY_ID"] == minio_env["MINIO_ROOT_USER"]
        assert env["AWS_SECRET_ACCESS_KEY"] == minio_env["MINIO_ROOT_PASSWORD"]
        for name in env:
            assert name in server_help or name == "STATELESS" or name in build_help or name.startswith("AWS_")
    mc_host = services["bucket"]["environment"]["MC_HOST_local"]
    assert mc_host.endswith("@minio:9000")
    assert "${MINIO_ROOT_USER:-docs-mcp}" in mc_host and "${MINIO_ROOT_PASSWORD:-change-me-please}" in mc_host


@pytest.mark.integration
def test_compose_object_store_commands_publish_and_serve(tmp_path: Path) -> None:
    """The publish job's and the replica's commands, run as written against an S3 server on
    127.0.0.1 (moto standing in for MinIO; container paths mapped, port and host made local)."""
    from tests.fakes.s3_server import s3_server
    from tests.support.server_process import PROTOCOL, ServerProcess, post_mcp, request

    services = yaml.safe_load(COMPOSE.read_text("utf-8"))["services"]
    bin_dir = Path(sys.executable).parent
    with s3_server() as s3:
        bucket = services["bucket"]["command"][-1].removeprefix("local/")
        s3.create_bucket(bucket)
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env |= s3.environment() | {"LANCEDB_LOG": "error"}
        _, command, *flags = services["publish"]["command"]
        flags = [str(REPO_ROOT / "examples" / "docs") if f == "/corpus" else f for f in flags]
        done = subprocess.run(
            [str(bin_dir / "docs-mcp"), command, *flags], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 0, done.stderr
        _, *server_flags = services["replica"]["command"]
        local = {"0.0.0.0": "127.0.0.1", "20310": "0", "/tmp/index-cache": str(tmp_path / "cache")}
        server_flags = [local[f] if f in local else str(f) for f in server_flags]
        server = ServerProcess([*server_flags, "--log-level", "info"], env={**env, "STATELESS": "true"})
        try:
            started = server.wait_for_log(lambda r: r.get("message") == "started mcp server", timeout=60)
            port = int(started["properties"]["port"])
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "search_docs", "arguments": {"query": "retry configuration"}}}  # fmt: skip
            status, _, messages = post_mcp(port, call, PROTOCOL)
            assert status == 200 and messages[-1]["result"]["isError"] is False, messages
            status, _, body = request(port, "GET", "/healthz")
            assert status == 200
            generation = json.loads(body)["index"]["generation"]
            assert generation["path"].startswith(".lancedb-")
            assert (tmp_path / "cache" / generation["path"].removeprefix(".lancedb-")).is_dir()
        finally:
            server.stop()


# --- the recipe, carried out ------------------------------------------------------------------------


class Recipe:
    """Carries out the Dockerfile's stages on this machine, container paths mapped under ``root``."""

    MAPPED = ("opt", "index", "corpus", "tmp", "var", "run", "nonexistent")

    def __init__(self, dockerfile: Dockerfile, root: Path, build_args: dict[str, str]) -> None:
        self.dockerfile = dockerfile
        self.root = root
        self.build_args = build_args
        self.log: list[str] = []

    def host(self, text: str) -> str:
        """Rewrite container paths in ``text`` to their places on this machine."""
        prefixes = "|".join(self.MAPPED)

        def replace(match: re.Match[str]) -> str:
            top = match.group(1)
            return str(REPO_ROOT) if top == "src" else str(self.root / top)

        return re.sub(rf"(?<![\w./-])/({prefixes}|src)(?=[/\s\"':]|$)", replace, text)

    def _variables(self, stage: Stage, upto: int) -> tuple[dict[str, str], dict[str, str]]:
        """ARG values and ENV values in force before instruction ``upto`` of ``stage``."""
        args: dict[str, str] = {}
        for instruction in self.dockerfile.global_args:
            args.update(parse_assignments(instruction.args))
        env: dict[str, str] = {}
        for instruction in stage.instructions[:upto]:
            if instruction.keyword == "ARG":
                for name, default in parse_assignments(instruction.args).items():
                    args[name] = self.build_args.get(name, default)
            elif instruction.keyword == "ENV":
                for name, value in parse_assignments(instruction.args).items():
                    env[name] = expand(value, {**os.environ, **args, **env})
        return args, env

    def build_stage(self) -> None:
        stage = self.dockerfile.stage("build")
        cwd = REPO_ROOT
        for position, instruction in enumerate(stage.instructions):
            args, env = self._variables(stage, position)
            if instruction.keyword == "WORKDIR":
                cwd = Path(self.host(instruction.args))
            elif instruction.keyword == "COPY":
                self._copy(instruction, args, cwd)
            elif instruction.keyword == "RUN":
                self._run(instruction, {**args, **env}, cwd)
            else:
                assert instruction.keyword in {"ARG", "ENV"}, f"unsupported in the build stage: {instruction}"

    def _copy(self, instruction: Instruction, args: dict[str, str], cwd: Path) -> None:
        flags, rest = split_flags(instruction.args)
        assert not flags, f"line {instruction.line}: COPY flags in the build stage: {flags}"
        *sources, destination = shlex.split(expand(rest, args))
        target = Path(self.host(destination)) if destination.startswith("/") else cwd / destination
        for source in sources:
            assert (REPO_ROOT / source).exists(), f"line {instruction.line}: {source} is not in the context"
            assert not dockerignore_excludes(source), f"line {instruction.line}: .dockerignore drops {source}"
            if target.resolve().is_relative_to(REPO_ROOT):
                continue  # the context is the repository itself
            if (REPO_ROOT / source).is_dir():
                shutil.copytree(REPO_ROOT / source, target, dirs_exist_ok=True)
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO_ROOT / source, target)

    def _run(self, instruction: Instruction, variables: dict[str, str], cwd: Path) -> None:
        flags, command = split_flags(instruction.args)
        if re.search(r"pip install .*\"uv==", command):
            self.log.append(f"skipped (uv is installed already): {command}")
            return
        for flag in flags:
            mount: dict[str, str] = {}
            for part in flag.removeprefix("--mount=").split(","):
                key, _, value = part.partition("=")
                mount[key] = value
            target = mount.get("target", "")
            if mount.get("type") == "cache" and target.split("/")[1] in self.MAPPED:
                Path(self.host(target)).mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **variables}
        env.update({"UV_LINK_MODE": "hardlink", "UV_COMPILE_BYTECODE": "0", "UV_OFFLINE": "1"})
        env.pop("VIRTUAL_ENV", None)
        script = self.host(command)
        self.log.append(f"RUN {script}")
        done = subprocess.run(
            ["sh", "-c", script],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"Dockerfile:{instruction.line} failed:\n{script}\n{done.stdout}{done.stderr}"
        )

    def runtime(self) -> tuple[dict[str, str], Path, list[str], list[str]]:
        """Environment, working directory, server command and health-check command of the image."""
        stage = self.dockerfile.stage("runtime")
        for instruction in stage.all("COPY"):
            source = split_flags(instruction.args)[1].split()[0]
            assert Path(self.host(source)).exists(), f"the build stage did not produce {source}"
        _, env = self._variables(stage, len(stage.instructions))
        env = {name: self.host(value) for name, value in env.items()}
        env["PATH"] = env["PATH"].replace(os.environ.get("PATH", ""), IMAGE_PATH)
        env["HOME"] = str(self.root / "nonexistent")
        env["LANCEDB_LOG"] = "error"
        cwd = Path(self.host(stage.one("WORKDIR").args))
        command = [self.host(word) for word in exec_form(stage.one("CMD").args)]
        _, health = healthcheck_command(stage.one("HEALTHCHECK").args)
        return env, cwd, command, health


class Server:
    """The image's CMD as a subprocess; stderr lines are collected by a thread."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def wait_for_port(self, timeout: float = SERVER_TIMEOUT) -> int:
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no 'started mcp server' log within {timeout} s:\n{self.text()}"
                ) from None
            if line is None:
                raise AssertionError(
                    f"the server exited ({self.proc.wait()}) before listening:\n{self.text()}"
                )
            try:
                record: Any = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("message") == "started mcp server":
                return int(record["properties"]["port"])

    def text(self) -> str:
        return "\n".join(self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=SERVER_TIMEOUT)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def server_processes() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


@pytest.mark.slow
@pytest.mark.integration
def test_the_recipe_builds_an_index_and_serves_it(
    dockerfile: Dockerfile, tmp_path: Path, server_processes: list[Server]
) -> None:
    recipe = Recipe(dockerfile, tmp_path, {"GIT_COMMIT": GIT_COMMIT, "BUILD_DATE": BUILD_DATE})
    recipe.build_stage()
    index = tmp_path / "index"
    assert (index / "metadata.json").is_file() and (index / ".lancedb").is_dir()
    assert json.loads((index / "metadata.json").read_text("utf-8"))["heading_vectors"]["provider"] == "local"
    assert not (index / ".embedding-cache").exists(), "the embedding cache must stay out of the image"
    runtime_venv, indexer_venv = tmp_path / "opt" / "docs-mcp", tmp_path / "opt" / "indexer"
    assert (runtime_venv / "bin" / "docs-mcp-server").is_file()
    assert not (runtime_venv / "bin" / "docs-mcp").exists(), "the runtime image has no indexer"
    assert (indexer_venv / "bin" / "docs-mcp").is_file()

    env, cwd, command, health = recipe.runtime()
    assert cwd == index
    port_at = command.index("--port") + 1
    host_at = command.index("--host") + 1
    assert (command[port_at], command[host_at]) == ("20310", "0.0.0.0")
    command[port_at], command[host_at] = "0", "127.0.0.1"
    before = snapshot(index)
    server = Server(command, env, cwd)
    server_processes.append(server)
    port = server.wait_for_port()

    # The image's HEALTHCHECK, pointed at the chosen port.
    probe = [word.replace(":20310/", f":{port}/") for word in health]
    checked = subprocess.run(probe, env=env, cwd=cwd, capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr

    result = mcp_smoke.smoke(f"http://127.0.0.1:{port}", query="retry", timeout=SERVER_TIMEOUT)
    assert result.health["build"]["name"] == "docs-mcp-server"
    assert result.health["build"]["gitCommit"] == GIT_COMMIT
    assert result.health["build"]["buildDate"] == BUILD_DATE
    assert {"search_docs", "get_doc"} <= set(result.tools)
    assert any("retr" in hit["chunk_id"] for hit in result.hits[:3]), [h["chunk_id"] for h in result.hits]

    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=SERVER_TIMEOUT) == 0, server.text()
    # Read-only at run time: the index is untouched and the user's (nonexistent) home stays absent.
    assert snapshot(index) == before
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.slow
@pytest.mark.integration
def test_the_recipe_embeds_with_the_bundled_local_model(
    dockerfile: Dockerfile, tmp_path: Path, server_processes: list[Server]
) -> None:
    """EMBEDDING_PROVIDER=local: no key and no network; the image's server embeds queries itself."""
    recipe = Recipe(dockerfile, tmp_path, {"EMBEDDING_PROVIDER": "local"})
    recipe.build_stage()
    metadata = json.loads((tmp_path / "index" / "metadata.json").read_text("utf-8"))
    assert metadata["embedding"]["provider"] == "local"
    assert metadata["embedding"]["dimensions"] == 384

    env, cwd, command, _ = recipe.runtime()
    assert not any(name.startswith("OPENAI") for name in env)
    command[command.index("--port") + 1], command[command.index("--host") + 1] = "0", "127.0.0.1"
    server = Server(command, env, cwd)
    server_processes.append(server)
    port = server.wait_for_port()
    result = mcp_smoke.smoke(f"http://127.0.0.1:{port}", query="retry", timeout=SERVER_TIMEOUT)
    assert any("retr" in hit["chunk_id"] for hit in result.hits[:3]), [h["chunk_id"] for h in result.hits]
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=SERVER_TIMEOUT) == 0, server.text()
    assert "Traceback" not in server.text()


@pytest.mark.slow
@pytest.mark.integration
def test_the_recipe_embeds_with_the_build_secret(dockerfile: Dockerfile, tmp_path: Path) -> None:
    """EMBEDDING_PROVIDER=openai: the BuildKit secret becomes the API key, and stays out of the index."""
    secret = "sk-docker-recipe-secret"
    secrets = tmp_path / "run" / "secrets"
    secrets.mkdir(parents=True)
    (secrets / "openai_api_key").write_text(secret + "\n", "utf-8")
    with FakeOpenAI(api_key=secret) as api:
        build_args = {
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_MODEL": "text-embedding-3-small",
            "EMBEDDING_BASE_URL": api.base_url,
        }
        Recipe(dockerfile, tmp_path, build_args).build_stage()
        embedded = api.requests_to("embeddings")
    assert embedded and all(r.headers.get("authorization") == f"Bearer {secret}" for r in embedded)
    assert all(r.json["model"] == "text-embedding-3-small" for r in embedded)
    metadata = json.loads((tmp_path / "index" / "metadata.json").read_text("utf-8"))
    assert metadata["embedding"]["provider"] == "openai"
    # The embedding cache went to the cache mount, and the key is nowhere in what the image copies.
    assert any((tmp_path / "var" / "cache" / "docs-mcp").rglob("*"))
    for path in (tmp_path / "index").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
