"""extract(): safe (the whole archive is refused for one bad member) and atomic."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

import socialbench.acquire.archive as archive_mod
from socialbench.acquire.archive import UnsafeArchive, check_archive, extract
from socialbench.core.errors import DataError, SocialbenchError

GOOD = {"README.txt": b"hello\n", "words/ES2002a.A.words.xml": b"<w/>\n", "words/deep/x.bin": bytes(range(256)) * 40}
TAR_MODES = {"tar": "w", "tar.gz": "w:gz", "tar.bz2": "w:bz2", "tar.xz": "w:xz"}


def make_zip(path: Path, files: dict[str, bytes], extra: list[zipfile.ZipInfo | tuple] = (), stored=False) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        for item in extra:
            info, data = item if isinstance(item, tuple) else (item, b"")
            zf.writestr(info, data)
    return path


def tar_info(name: str, data: bytes = b"", type_=tarfile.REGTYPE, linkname: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = type_
    info.linkname = linkname
    info.size = len(data) if type_ == tarfile.REGTYPE else 0
    info.mode = 0o644
    return info, data


def make_tar(path: Path, files: dict[str, bytes], extra: list[tuple[tarfile.TarInfo, bytes]] = (), mode="w:gz") -> Path:
    with tarfile.open(path, mode, format=tarfile.PAX_FORMAT) as tf:
        for name, data in files.items():
            info, data = tar_info(name, data)
            tf.addfile(info, io.BytesIO(data))
        for info, data in extra:
            tf.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def assert_nothing_written(tmp_path: Path, dest: Path) -> None:
    assert not dest.exists()
    assert not list(dest.parent.glob(f".{dest.name}.*")), "a temporary folder was left behind"
    assert not (tmp_path / "evil").exists() and not Path("/tmp/socialbench-evil").exists()


# --- good archives


@pytest.mark.parametrize("fmt", ["zip", *TAR_MODES])
def test_good_archive_round_trips(tmp_path, fmt):
    path = tmp_path / f"a.{fmt}"
    make_zip(path, GOOD) if fmt == "zip" else make_tar(path, GOOD, mode=TAR_MODES[fmt])
    dest = tmp_path / "out" / "annotations"
    assert extract(path, dest) == dest
    assert tree(dest) == GOOD
    assert [p.name for p in dest.parent.iterdir()] == ["annotations"]


def test_folder_entries_are_created_even_when_empty(tmp_path):
    path = make_zip(tmp_path / "a.zip", GOOD, [zipfile.ZipInfo("empty/")])
    dest = extract(path, tmp_path / "out")
    assert (dest / "empty").is_dir()


def test_existing_dest_is_refused_by_default(tmp_path):
    path = make_zip(tmp_path / "a.zip", GOOD)
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(SocialbenchError, match="already exists"):
        extract(path, dest)
    assert tree(dest) == {"keep.txt": b"mine"}


def test_replace_swaps_the_old_folder_for_the_new_one(tmp_path):
    path = make_zip(tmp_path / "a.zip", GOOD)
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "stale.txt").write_text("old")
    extract(path, dest, replace=True)
    assert tree(dest) == GOOD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip", "out"]


# --- unsafe members: the whole archive is refused, nothing is written


@pytest.mark.parametrize("name", ["../evil", "words/../../evil", "..\\evil", "a/./../../evil"])
@pytest.mark.parametrize("fmt", ["zip", "tar.gz"])
def test_dotdot_member_refuses_the_whole_archive(tmp_path, fmt, name):
    path = tmp_path / f"a.{fmt}"
    files = {**GOOD, name: b"pwned"}
    make_zip(path, files) if fmt == "zip" else make_tar(path, files)
    dest = tmp_path / "out" / "x"
    with pytest.raises(UnsafeArchive) as info:
        extract(path, dest)
    assert str(path) in str(info.value) and repr(name) in str(info.value)
    assert "'..' component" in str(info.value)
    assert_nothing_written(tmp_path, dest)


@pytest.mark.parametrize("name", ["/tmp/socialbench-evil", "\\\\server\\evil", "C:/evil"])
@pytest.mark.parametrize("fmt", ["zip", "tar.gz"])
def test_absolute_member_refuses_the_whole_archive(tmp_path, fmt, name):
    path = tmp_path / f"a.{fmt}"
    files = {**GOOD, name: b"pwned"}
    make_zip(path, files) if fmt == "zip" else make_tar(path, files)
    dest = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match="is an absolute path") as info:
        extract(path, dest)
    assert info.value.member == name
    assert_nothing_written(tmp_path, dest)


def test_tar_symlink_member_is_refused(tmp_path):
    path = make_tar(tmp_path / "a.tar.gz", GOOD, [tar_info("link", type_=tarfile.SYMTYPE, linkname="/etc/passwd")])
    dest = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match=r"member 'link' is a symbolic link \(to '/etc/passwd'\)"):
        extract(path, dest)
    assert_nothing_written(tmp_path, dest)


def test_tar_symlink_inside_dest_is_refused_too(tmp_path):
    path = make_tar(
        tmp_path / "a.tar", GOOD, [tar_info("alias", type_=tarfile.SYMTYPE, linkname="README.txt")], mode="w"
    )
    with pytest.raises(UnsafeArchive, match="symbolic link"):
        extract(path, tmp_path / "out")
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_zip_symlink_member_is_refused(tmp_path):
    info = zipfile.ZipInfo("link")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    path = make_zip(tmp_path / "a.zip", GOOD, [(info, b"/etc/passwd")])
    dest = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match="member 'link' is a symbolic link"):
        extract(path, dest)
    assert_nothing_written(tmp_path, dest)


def test_tar_hardlink_member_is_refused(tmp_path):
    path = make_tar(tmp_path / "a.tar.gz", GOOD, [tar_info("hard", type_=tarfile.LNKTYPE, linkname="/etc/passwd")])
    dest = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match=r"member 'hard' is a hard link \(to '/etc/passwd'\)"):
        extract(path, dest)
    assert_nothing_written(tmp_path, dest)


@pytest.mark.parametrize(
    "type_, reason", [(tarfile.CHRTYPE, "device file"), (tarfile.BLKTYPE, "device file"), (tarfile.FIFOTYPE, "FIFO")]
)
def test_tar_device_and_fifo_members_are_refused(tmp_path, type_, reason):
    path = make_tar(tmp_path / "a.tar.gz", GOOD, [tar_info("dev/node", type_=type_)])
    dest = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match=f"member 'dev/node' is a {reason}"):
        extract(path, dest)
    assert_nothing_written(tmp_path, dest)


def test_member_that_is_both_file_and_folder_is_refused(tmp_path):
    path = make_zip(tmp_path / "a.zip", {"words": b"a file", "words/x.xml": b"<x/>"})
    with pytest.raises(UnsafeArchive, match="needs it as a folder"):
        extract(path, tmp_path / "out")
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_check_archive_lists_members_without_writing(tmp_path):
    path = make_tar(tmp_path / "a.tar.xz", GOOD, mode="w:xz")
    assert sorted(m.relpath for m in check_archive(path)) == sorted(GOOD)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.xz"]


def test_not_an_archive_is_a_data_error_naming_it(tmp_path):
    path = tmp_path / "notes.zip"
    path.write_bytes(b"just text, not an archive")
    with pytest.raises(DataError, match=rf"^{path}: not a zip or tar"):
        extract(path, tmp_path / "out")


def test_missing_archive_is_a_data_error_naming_it(tmp_path):
    with pytest.raises(DataError, match="archive does not exist"):
        extract(tmp_path / "nope.zip", tmp_path / "out")


# --- atomicity


def test_interrupted_extraction_leaves_dest_absent(tmp_path, monkeypatch):
    path = make_zip(tmp_path / "a.zip", GOOD)
    dest = tmp_path / "out"
    calls = []

    def interrupted_copy(src, dst, budget):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        archive_mod.shutil.copyfileobj(src, dst)

    monkeypatch.setattr(archive_mod, "_copy", interrupted_copy)
    with pytest.raises(KeyboardInterrupt):
        extract(path, dest)
    assert len(calls) == 2
    assert_nothing_written(tmp_path, dest)


def test_corrupt_member_midway_is_a_data_error_and_leaves_dest_absent(tmp_path):
    files = {"a.txt": b"A" * 1000, "b.txt": b"B" * 1000, "c.txt": b"C" * 1000}
    path = make_zip(tmp_path / "a.zip", files, stored=True)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"B" * 1000) + 500] = ord("X")  # b.txt's CRC no longer matches
    path.write_bytes(bytes(raw))
    dest = tmp_path / "out"
    with pytest.raises(DataError, match=r"extraction failed at member 'b.txt'"):
        extract(path, dest)
    assert_nothing_written(tmp_path, dest)


def test_failed_replace_keeps_the_old_folder(tmp_path):
    files = {"a.txt": b"A" * 1000, "b.txt": b"B" * 1000}
    path = make_zip(tmp_path / "a.zip", files, stored=True)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"B" * 1000)] = ord("X")
    path.write_bytes(bytes(raw))
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old.txt").write_text("old")
    with pytest.raises(DataError):
        extract(path, dest, replace=True)
    assert tree(dest) == {"old.txt": b"old"}


def test_leftovers_of_a_killed_extraction_are_removed_next_time(tmp_path):
    path = make_zip(tmp_path / "a.zip", GOOD)
    leftover = tmp_path / ".out.extract-abc123"
    (leftover / "words").mkdir(parents=True)
    extract(path, tmp_path / "out")
    assert not leftover.exists()
    assert tree(tmp_path / "out") == GOOD


# --- bombs, duplicated names, a tar cut short (issue 20, point 2)

TIGHT = archive_mod.ArchiveLimits(max_bytes=10 * 1024**2, max_ratio=50, ratio_floor=1024**2)


def zeros_zip(path: Path, mb: int = 4) -> Path:
    """A real (small) decompression bomb: a few MB of zeros deflate to a few KB."""
    return make_zip(path, {"zeros.bin": bytes(mb * 1024**2)})


def test_a_zip_of_zeros_beyond_the_ratio_is_refused_and_nothing_is_left(tmp_path):
    path = zeros_zip(tmp_path / "bomb.zip")
    with pytest.raises(archive_mod.ArchiveTooLarge, match=r"'zeros.bin'.*acquire.archive.max_ratio"):
        extract(path, tmp_path / "out", limits=TIGHT)
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_an_archive_beyond_the_total_bytes_is_refused(tmp_path):
    path = make_zip(tmp_path / "big.zip", {"a.bin": bytes(300_000), "b.bin": bytes(300_000)}, stored=True)
    limits = archive_mod.ArchiveLimits(max_bytes=500_000)
    with pytest.raises(archive_mod.ArchiveTooLarge, match=r"'b.bin'.*more than 500000 bytes"):
        extract(path, tmp_path / "out", limits=limits)
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_an_archive_of_more_members_than_allowed_is_refused(tmp_path):
    path = make_tar(tmp_path / "many.tar.gz", {f"f{k}.txt": b"x" for k in range(5)})
    with pytest.raises(archive_mod.ArchiveTooLarge, match=r"'f3.txt' is member 4, beyond.*max_members \(3\)"):
        extract(path, tmp_path / "out", limits=archive_mod.ArchiveLimits(max_members=3))
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_the_bytes_written_are_counted_even_when_the_declared_sizes_say_nothing(tmp_path, monkeypatch):
    path = zeros_zip(tmp_path / "bomb.zip")
    declared = archive_mod._zip_entries
    monkeypatch.setattr(archive_mod, "_zip_entries", lambda zf: [(*e[:3], 0) for e in declared(zf)])
    with pytest.raises(archive_mod.ArchiveTooLarge, match="decompression bomb"):
        extract(path, tmp_path / "out", limits=TIGHT)
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_text_that_compresses_well_passes_under_the_ratio_floor(tmp_path):
    path = make_zip(tmp_path / "text.zip", {"words.xml": b"<w>ok</w>\n" * 50_000})
    assert tree(extract(path, tmp_path / "out"))["words.xml"].startswith(b"<w>ok</w>")


def test_params_set_the_limits_and_keep_the_defaults_of_what_they_omit():
    limits = archive_mod.ArchiveLimits.from_params({"acquire": {"archive": {"max_members": 7}}})
    assert limits.max_members == 7 and limits.max_ratio == archive_mod.ArchiveLimits().max_ratio


def test_a_zip_with_a_name_twice_is_refused(tmp_path):
    path = tmp_path / "dup.zip"
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "w") as zf:
        zf.writestr("labels.csv", b"gold")
        zf.writestr("labels.csv", b"forged")
    with pytest.raises(UnsafeArchive, match=r"'labels.csv' is in the archive twice"):
        extract(path, tmp_path / "out")
    assert_nothing_written(tmp_path, tmp_path / "out")


def test_a_tar_with_a_name_twice_under_another_spelling_is_refused(tmp_path):
    path = make_tar(tmp_path / "dup.tar", {"a/x.txt": b"1"}, [tar_info("./a//x.txt", b"2")], mode="w")
    with pytest.raises(UnsafeArchive, match="in the archive twice"):
        check_archive(path)


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_a_tar_cut_at_a_block_boundary_is_refused(tmp_path, mode):
    whole = make_tar(tmp_path / "whole.tar", {"a.txt": b"x" * 1000, "b.txt": b"y" * 10}, mode="w").read_bytes()
    cut = whole[: 512 + 1024]  # a.txt's header and data: a valid-looking archive of one member
    path = tmp_path / ("cut.tar" if mode == "w" else "cut.tar.gz")
    if mode == "w":
        path.write_bytes(cut)
    else:
        import gzip

        path.write_bytes(gzip.compress(cut))
    with pytest.raises(UnsafeArchive, match="ends without its end-of-archive block"):
        extract(path, tmp_path / "out")
    assert_nothing_written(tmp_path, tmp_path / "out")
