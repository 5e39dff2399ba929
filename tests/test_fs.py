from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.core.errors import PathEscapeError, UsageError
from tether.core.exit_codes import ExitCode
from tether.fs import (
    SymlinkLoopError,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    resolve_inside,
)

# --- atomic writes -------------------------------------------------------------------


def test_atomic_write_creates_parents_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.json"
    atomic_write_json(target, {"unit": "T-1", "note": "grüße"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"unit": "T-1", "note": "grüße"}
    assert target.read_text(encoding="utf-8").endswith("}\n")
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_atomic_write_replaces_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "page.md"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new\r\nline")
    assert target.read_bytes() == b"new\r\nline"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_new_file_gets_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "x", b"1")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x").stat().st_mode) == 0o644


def test_atomic_write_replaces_a_symlink_not_its_target(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    link = tmp_path / "link.txt"
    link.symlink_to(outside)
    atomic_write_text(link, "mine")
    assert not link.is_symlink()
    assert link.read_text() == "mine"
    assert outside.read_text() == "keep me"


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "data.json"
    target.write_text('{"ok": true}')
    with pytest.raises(TypeError):
        atomic_write_json(target, {"bad": object()})
    assert target.read_text() == '{"ok": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]


def test_readers_and_a_killed_writer_never_see_a_torn_file(tmp_path: Path) -> None:
    """Another process reads whole old or whole new content, even when the writer is killed."""
    target = tmp_path / "big.txt"
    atomic_write_text(target, "a" * 200_000)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom pathlib import Path\nfrom tether.fs import atomic_write_text\n"
            "i = 0\n"
            "while True:\n"
            "    i += 1\n"
            "    atomic_write_text(Path(sys.argv[1]), 'ab'[i % 2] * 200_000)\n",
            str(target),
        ]
    )
    try:
        changes = 0
        last = "a"
        deadline = time.monotonic() + 30
        while changes < 20:
            assert writer.poll() is None
            assert time.monotonic() < deadline, f"only {changes} rewrites seen"
            text = target.read_text()
            assert len(text) == 200_000
            assert len(set(text)) == 1
            changes += text[0] != last
            last = text[0]
    finally:
        writer.kill()
        writer.wait()
    text = target.read_text()
    assert len(text) == 200_000 and len(set(text)) == 1
    # a killed writer may leave its hidden temp file behind, never a damaged target
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "big.txt"]
    assert all(name.startswith(".big.txt.") and name.endswith(".tmp") for name in leftovers)


# --- resolve_inside --------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    (base / "docs" / "sub").mkdir(parents=True)
    (base / "docs" / "page.md").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    return base


def test_plain_relative_and_absolute_paths_inside(root: Path) -> None:
    assert resolve_inside(root, "docs/page.md") == root / "docs" / "page.md"
    assert resolve_inside(root, root / "docs" / "page.md") == root / "docs" / "page.md"
    assert resolve_inside(root, "docs/sub/../page.md") == root / "docs" / "page.md"
    assert resolve_inside(root, "docs/new/file.md") == root / "docs" / "new" / "file.md"
    assert resolve_inside(root, ".") == root
    assert resolve_inside(root, "") == root


@pytest.mark.parametrize(
    "given", ["..", "../outside/secret.txt", "docs/../../outside", "/etc/passwd", "/"]
)
def test_escapes_by_dots_and_absolute_paths_are_refused(root: Path, given: str) -> None:
    with pytest.raises(PathEscapeError) as info:
        resolve_inside(root, given)
    assert info.value.exit_code == ExitCode.USAGE
    assert info.value.given == given
    assert "resolves outside" in str(info.value)


def test_file_symlink_pointing_out_is_refused(root: Path) -> None:
    (root / "docs" / "leak.md").symlink_to(root.parent / "outside" / "secret.txt")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/leak.md")


def test_dir_symlink_pointing_out_is_refused_for_paths_below_it(root: Path) -> None:
    (root / "docs" / "ext").symlink_to(root.parent / "outside", target_is_directory=True)
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/ext")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/ext/secret.txt")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/ext/not-yet-there.md")


def test_relative_symlink_with_dots_out_is_refused(root: Path) -> None:
    (root / "docs" / "sub" / "up").symlink_to("../../../outside")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/sub/up/secret.txt")


def test_dotdot_applies_after_the_link_like_the_kernel(root: Path) -> None:
    # docs/deep -> docs/sub; "deep/.." is docs (the link's parent is irrelevant).
    (root / "docs" / "deep").symlink_to(root / "docs" / "sub")
    assert resolve_inside(root, "docs/deep/../page.md") == root / "docs" / "page.md"
    # a link to a folder outside: "ext2/../secret.txt" lands outside, not in docs/.
    (root.parent / "outside" / "inner").mkdir()
    (root / "docs" / "ext2").symlink_to(root.parent / "outside" / "inner")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/ext2/../secret.txt")


def test_symlink_chain_ending_outside_is_refused(root: Path) -> None:
    (root / "c").symlink_to(root.parent / "outside" / "secret.txt")
    (root / "b").symlink_to("c")
    (root / "docs" / "a").symlink_to("../b")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/a")


def test_symlink_chain_ending_inside_is_allowed(root: Path) -> None:
    (root / "c").symlink_to("docs/page.md")
    (root / "b").symlink_to(root / "c")
    (root / "docs" / "a").symlink_to("../b")
    assert resolve_inside(root, "docs/a") == root / "docs" / "page.md"


def test_dangling_symlinks(root: Path) -> None:
    (root / "docs" / "gone-out").symlink_to(root.parent / "outside" / "nothing")
    (root / "docs" / "gone-in").symlink_to("missing.md")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "docs/gone-out")
    assert resolve_inside(root, "docs/gone-in") == root / "docs" / "missing.md"


def test_symlink_loop_is_refused(root: Path) -> None:
    (root / "x").symlink_to("y")
    (root / "y").symlink_to("x")
    with pytest.raises(SymlinkLoopError) as info:
        resolve_inside(root, "x/file")
    assert isinstance(info.value, PathEscapeError)
    assert "symlinks (a loop?)" in str(info.value)


def test_root_given_through_a_symlink(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert resolve_inside(alias, "docs/page.md") == root / "docs" / "page.md"
    assert resolve_inside(alias, alias / "docs") == root / "docs"
    with pytest.raises(PathEscapeError):
        resolve_inside(alias, "../outside")


def test_sibling_with_a_common_prefix_is_outside(root: Path) -> None:
    (root.parent / "root-evil").mkdir()
    with pytest.raises(PathEscapeError):
        resolve_inside(root, root.parent / "root-evil" / "x")


def test_nul_byte_is_a_usage_error(root: Path) -> None:
    with pytest.raises(UsageError, match="NUL byte"):
        resolve_inside(root, "docs/\0page")


def test_a_path_resolved_from_the_already_resolved_root_is_the_same(tmp_path: Path) -> None:
    from tether.fs import resolve_inside

    root = tmp_path / "board"
    (root / "INBOX").mkdir(parents=True)
    (root / "real").mkdir()
    (root / "inside-link").symlink_to(root / "real")
    (root / "out-link").symlink_to(tmp_path)
    (tmp_path / "via").symlink_to(root)  # the root reached through a link
    for base in (root, tmp_path / "via"):
        real_root = resolve_inside(base, ".")
        # out-link/board leads out and back in: inside, both ways
        for rel in ("INBOX", "inside-link/x", "missing/deeper", "INBOX/../real", "out-link/board"):
            assert resolve_inside(base, rel, real_root=real_root) == resolve_inside(base, rel)
        for rel in ("out-link", "out-link/other", "../elsewhere", "INBOX/../../x"):
            with pytest.raises(PathEscapeError):
                resolve_inside(base, rel, real_root=real_root)
