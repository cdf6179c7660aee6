"""The library cache trusts only what the user's own kidym built (issue 27, the audit):
a relative ``KIDYM_CACHE_DIR`` broke every build ("internal error … a bug in kidym");
a foreign ``.so`` with a matching ``.sha256`` beside it was loaded (its constructor
ran); a cache folder of another user or writable by all was used without a word; a
full disk left a ``.build-*`` folder and a message without the path."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path

import pytest

import kidym
from kidym.cache import CacheError, cache_dir, private_cache_dir
from kidym.codegen import build, generate_c
from kidym.simulation.compiled import CompiledSystem
from tests.codegen.shared import equations

PENDULUM = ("m = 2; l = 0.7; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12; "
            "GRAVITY := 0, -g, 0; g = 9.81;")
SLIDER = "m = 3; k = 5; B | Sx(x) | m(m); Ck.x = k;"


def test_a_relative_cache_dir_is_made_absolute_once(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KIDYM_CACHE_DIR", "relative-cache")
    assert cache_dir() == tmp_path / "relative-cache"
    eq = equations(PENDULUM)
    lib = build(generate_c(eq))
    assert lib.parent == tmp_path / "relative-cache" and lib.is_absolute()
    os.chdir(tmp_path / "relative-cache")   # the same folder, wherever the process goes
    assert cache_dir() == tmp_path / "relative-cache"
    # the compiled engine (a second route: the NumPy engine) runs from it
    a = kidym.simulate(eq, t_end=0.3, initial={"phi": 0.3}, engine="compiled")
    b = kidym.simulate(eq, t_end=0.3, initial={"phi": 0.3}, engine="numpy")
    assert a.stats["engine"] == "compiled"
    assert abs(a["phi"][-1] - b["phi"][-1]) < 1e-6


def test_a_foreign_library_with_its_sha256_beside_it_is_not_loaded(monkeypatch, tmp_path):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    pendulum = build(generate_c(equations(PENDULUM)))
    slider = build(generate_c(equations(SLIDER)))
    foreign = slider.read_bytes()
    # another model's library, with the plain SHA-256 of its bytes (what a build wrote
    # before) and then with the digest kidym wrote for it under its own name
    for digest in (hashlib.sha256(foreign).hexdigest(),
                   slider.with_suffix(".sha256").read_text()):
        pendulum.write_bytes(foreign)
        pendulum.with_suffix(".sha256").write_text(digest)
        assert build(generate_c(equations(PENDULUM))) == pendulum
        assert pendulum.read_bytes() != foreign
    system = CompiledSystem.build(equations(PENDULUM))
    assert [str(s) for s in system.equations.coordinates] == ["phi"]


def test_a_cache_writable_by_others_is_refused(monkeypatch, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(shared))
    with pytest.raises(CacheError, match=r"the kidym cache .*shared is not private: others "
                       r"may write to it \(mode 777\).*set KIDYM_CACHE_DIR.*chmod 700"):
        build(generate_c(equations(PENDULUM)))
    assert not list(shared.glob("*.so"))
    # the parser's tables (a pickle) are neither read from nor written to it
    kidym.parse(PENDULUM)
    assert not (shared / "parser").exists()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="giving a folder to another user needs root")
def test_a_cache_of_another_user_is_refused(monkeypatch, tmp_path):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)          # nobody
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(other))
    with pytest.raises(CacheError, match=r"belongs to another user \(uid 65534"):
        private_cache_dir()


def test_a_new_cache_is_private(monkeypatch, tmp_path):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path / "new" / "cache"))
    path = private_cache_dir()
    assert path.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("where", ["source", "publication"])
def test_a_full_disk_names_the_cache_and_leaves_no_build_folder(monkeypatch, tmp_path,
                                                                where):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    code = generate_c(equations(PENDULUM))
    if where == "source":
        real = Path.write_text

        def full(self, *args, **kwargs):
            if self.parent.name.startswith(".build-"):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(self, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", full)
    else:
        real_replace = os.replace

        def full_replace(src, dst):
            if str(dst).endswith(".so"):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_replace(src, dst)

        monkeypatch.setattr(os, "replace", full_replace)
    with pytest.raises(OSError, match=rf"cannot write the compiled model into the kidym "
                       rf"cache {tmp_path} \(No space left on device\): free space there"):
        build(code)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".build-")] == []
    assert not list(tmp_path.glob("*.so"))
    shutil.rmtree(tmp_path / "failed", ignore_errors=True)
