"""Bad input: paths read (docs/bad-input.md, classes "media", "path leaves its root", "read root",
"special file"): media outside the data folders, a path named in data that leaves its root, what
the retriever and the book read, a FIFO or device where a file is expected."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    CODAR_PARAMS,
    PARAMS,
    Case,
    frames,
    infer,
    jsonl,
    prepare,
    run_case,
    run_with,
    score,
    stored_cache,
    symlink,
    write,
)
from tests.conftest import make_instance


def escaping_media(media: str, prep=None, command=prepare):
    def setup(root: Path) -> list[str]:
        if prep:
            prep(root)
        write("data/bad.jsonl", json.dumps(make_instance("esc", media=[media])) + "\n")
        return command()

    return setup


def escaping_video(root: Path) -> list[str]:
    (root / "data" / "raw" / "out.mp4").symlink_to(root.parent / "elsewhere.mp4")
    shutil.copyfile(root / "data" / "raw" / "clip.mp4", root.parent / "elsewhere.mp4")
    write(
        "data/bad.jsonl",
        jsonl([make_instance("vesc", modality="video_text", media=["data/raw/out.mp4"], transcript="A: hi")]),
    )
    return frames("data/bad.jsonl")


def truncated_clip(root: Path) -> list[str]:
    data = (root / "data" / "raw" / "clip.mp4").read_bytes()
    write("data/raw/half.mp4", data[: len(data) // 2])
    return ["media", "cut", "data/raw/half.mp4", "--start", "0", "--end", "2", "--out-dir", "results/cut"]


def simulate_into_a_link(root: Path) -> list[str]:
    """annotate simulate whose --out-dir holds a sheet name that links out of it."""
    write("outside/annotator_1.csv", "keep\n")
    Path("results/sheets").mkdir(parents=True)
    Path("results/sheets/annotator_1.csv").symlink_to(root / "outside" / "annotator_1.csv")
    write("mt.yaml", PARAMS + "meetingtom: {}\n")
    write("data/items.jsonl", "")
    write("data/sheet.csv", "item_id,task,answer\n")
    return [
        "meetingtom",
        "annotate",
        "simulate",
        "--items",
        "data/items.jsonl",
        "--sheet",
        "data/sheet.csv",
        "--out-dir",
        "results/sheets",
        "--params",
        "mt.yaml",
    ]


def infer_media(media: str, link: bool = False):
    """infer on an instance whose image is ``media``, with an image outside the data folder
    (``elsewhere.png``) that ``media`` names through ``..`` or (``link``) links to."""

    def setup(root: Path) -> list[str]:
        shutil.copyfile("data/raw/img.png", "elsewhere.png")
        if link:
            Path(media).symlink_to(root / "elsewhere.png")
        write("data/bad.jsonl", jsonl([make_instance("m0", media=[media])]))
        return infer()

    return setup


def fifo(path: str):
    def prep(root: Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)

    return prep


def source_file(name: str, text: str, argv_source: str, root_dir: str = "data/src", split: str | None = None):
    """A MoCA source's file under ``root_dir``, and `moca candidates` reading it."""

    def setup(root: Path) -> list[str]:
        write(f"{root_dir}/{name}", text)
        return [
            "moca",
            "candidates",
            "--source",
            argv_source,
            "--root",
            root_dir,
            "--out",
            "results/c.jsonl",
            *(["--split", split] if split else []),
        ]

    return setup


def linked_source(root: Path) -> list[str]:
    write("data/src/train.jsonl", '{"id": 1, "img": "img/a.png", "text": "t"}\n')
    Path("data/src/img").symlink_to(root / "results")  # the image folder leads out of the source's root
    return ["moca", "candidates", "--source", "hateful_memes", "--root", "data/src", "--out", "results/c.jsonl"]


def corpus_with(prep: Callable[[Path], None]):
    """A bm25 corpus of one good file, changed by ``prep``, and `infer --method codar` reading it."""

    def setup(root: Path) -> list[str]:
        write("params.yaml", CODAR_PARAMS)
        write("data/corpus/good.md", "The referee enforces the rules of a match.\n")
        prep(root)
        return infer("data/i.jsonl", "--method", "codar")

    return setup


def outside_secret(root: Path) -> None:
    write("../secret.txt", "sk-planted-secret\n")
    Path("data/corpus/leak.txt").symlink_to(Path("../secret.txt").resolve())


# ---- issue 33, class 4: what the book reads (regular files inside the tables folder, UTF-8; docs/security.md) ----
def book_cmd(tables_dir: str = "results/bt") -> list[str]:
    return [
        "book",
        "--benchmark",
        "moca",
        "--tables-dir",
        tables_dir,
        "--instances",
        "data/i.jsonl",
        "--tracked",
        "results/t.json",
        "--out",
        "results/b.pdf",
    ]


def book_tables(**files: Callable[[Path, Path], None] | bytes):
    """A tables folder results/bt with a good table and ``files`` (bytes, or a maker given the path and the
    repository's root), and the book reading it."""

    def setup(root: Path) -> list[str]:
        write("results/bt/acc.csv", "model,value\nrandom,1\n")
        for name, made in files.items():
            path = Path("results/bt") / name
            if isinstance(made, bytes):
                write(str(path), made)
            else:
                made(path, root)
        return book_cmd()

    return setup


def link_out_of_the_repository(path: Path, root: Path) -> None:
    outside = root.parent / "outside.png"
    outside.write_bytes(b"\x89PNG secret")
    path.symlink_to(outside)


CASES = [
    # -- media outside the repository's data folders, or shorter than asked ----------------------------------
    Case(
        "prepare-media-dotdot",
        "media",
        escaping_media("data/../params.yaml"),
        "record esc, field 'media': data/../params.yaml leads to",
    ),
    Case(
        "prepare-media-symlink",
        "media",
        escaping_media("data/raw/link.png", symlink("data/raw/link.png", "params.yaml")),
        "leads through a symlink to",
    ),
    Case(
        "prepare-media-absolute",
        "media",
        escaping_media("/etc/hostname"),
        "/etc/hostname leads to /etc/hostname, outside the repository's data folder",
    ),
    Case(
        "frames-media-symlink",
        "media",
        escaping_video,
        "data/bad.jsonl, record vesc, field 'media': data/raw/out.mp4 leads through a symlink",
    ),
    Case(
        "cut-truncated-source",
        "media",
        truncated_clip,
        "data/raw/half.mp4: truncated: the container announces 20 video frames",
    ),
    # -- media a model is sent lie under the media roots (point 3): infer refuses the record --
    Case(
        "infer-media-links-out-of-the-data-folder",
        "media",
        infer_media("data/raw/out.png", link=True),
        "data/bad.jsonl, record m0, field 'media': data/raw/out.png leads through a symlink to",
        cache=True,
    ),
    Case(
        "infer-media-through-dotdot",
        "media",
        infer_media("data/../elsewhere.png"),
        "record m0, field 'media': data/../elsewhere.png leads to",
        cache=True,
    ),
    Case(
        "meetingtom-annotate-simulate-sheet-links-out",
        "path leaves its root",
        simulate_into_a_link,
        "--out-dir: sheet annotator_1.csv leads through a symlink to",
    ),
    # -- a path named inside data that leaves its declared root ----------------------------------------------
    Case(
        "candidates-image-path-dotdot",
        "path leaves its root",
        source_file("train.jsonl", '{"id": 1, "img": "../../params.yaml", "text": "t"}\n', "hateful_memes"),
        "data/src/train.jsonl, record 1, field 'img': image path ../../params.yaml leads to",
    ),
    Case(
        "candidates-image-id-dotdot",
        "path leaves its root",
        source_file("valid.json", '[{"image_id": "../../../params", "text": "t", "label": 0}]', "mmsd2", split="valid"),
        "data/src/valid.json, record 1, field 'image_id': image ../../../params.jpg leads to",
    ),
    Case(
        "candidates-season-dotdot",
        "path leaves its root",
        source_file("dev.tsv", "season\tepisode\tclip\ttext\tlabel\n..\t..\tx\thi\tjoke\n", "mintrec", split="dev"),
        "data/src/dev.tsv, record line 2, field 'season, episode, clip': clip ../../x.mp4 leads to",
    ),
    Case(
        "candidates-absolute-media",
        "path leaves its root",
        source_file(
            "supplementary.csv", "id,modality,text,media,label\ns1,image_text,hi,/etc/hostname,mock\n", "supplementary"
        ),
        "record s1, field 'media': media path /etc/hostname leads to /etc/hostname, outside data/src",
    ),
    Case(
        "candidates-image-through-a-symlink",
        "path leaves its root",
        linked_source,
        "field 'img': image path img/a.png leads through a symlink to",
    ),
    Case(
        "annotate-export-annotator-name-dotdot",
        "path leaves its root",
        run_with(
            [
                "moca",
                "annotate",
                "export",
                "--pool",
                "data/i.jsonl",
                "--out-dir",
                "results/ann",
                "--annotator",
                "../../x",
            ]
        ),
        "--annotator: sheet ../../x.csv leads to",
    ),
    # -- a FIFO, device or socket where a file is expected: refused before it is opened ----------------------
    Case(
        "infer-instances-fifo",
        "special file",
        run_with(infer("data/f.jsonl"), fifo("data/f.jsonl")),
        "data/f.jsonl: is a FIFO (named pipe), not a file; refused before opening it",
    ),
    Case(
        "score-predictions-device",
        "special file",
        run_with(score("/dev/null")),
        "/dev/null: is a character device, not a file; refused before opening it",
    ),
    Case(
        "score-out-fifo",
        "special file",
        run_with(score(out="results/f.json"), fifo("results/f.json")),
        "results/f.json: is a FIFO (named pipe), not a file (--out takes the path of a file)",
    ),
    Case(
        "check-params-fifo",
        "special file",
        run_with(["check-params", "--params", "p.yaml"], fifo("p.yaml")),
        "p.yaml: is a FIFO (named pipe), not a file",
    ),
    Case(
        "cache-stats-fifo",
        "special file",
        run_with(["cache", "stats", "--path", "c.sqlite"], fifo("c.sqlite")),
        "c.sqlite: is a FIFO (named pipe), not a request cache file",
    ),
    Case(
        "probe-fifo",
        "special file",
        run_with(["media", "probe", "data/raw/f.mp4"], fifo("data/raw/f.mp4")),
        "data/raw/f.mp4: is a FIFO (named pipe), not a file",
    ),
    Case(
        "candidates-source-file-fifo",
        "special file",
        run_with(
            ["moca", "candidates", "--source", "mmsd2", "--root", "data/src", "--split", "valid", "--out", "c.jsonl"],
            fifo("data/src/valid.json"),
        ),
        "data/src/valid.json: is a FIFO (named pipe), not a file",
    ),
    Case(
        "serve-list-fifo-dir",
        "special file",
        run_with(["serve", "list", "--dir", "reg"], fifo("reg")),
        "reg: is a FIFO (named pipe)",
    ),
    Case(
        "infer-corpus-link-out-of-the-corpus",
        "read root",
        corpus_with(outside_secret),
        "data/corpus/leak.txt: links to ",
    ),
    Case(
        "infer-corpus-fifo",
        "special file",
        corpus_with(fifo("data/corpus/pipe.txt")),
        "data/corpus/pipe.txt: is a FIFO (named pipe), not a corpus file",
    ),
    Case(
        "infer-corpus-is-a-file",
        "read root",
        corpus_with(lambda root: write("params.yaml", CODAR_PARAMS.replace("data/corpus", "data/corpus/good.md"))),
        "data/corpus/good.md: is a file, not a folder",
    ),
    Case(
        "infer-corpus-not-utf8",
        "read root",
        corpus_with(lambda root: write("data/corpus/latin1.txt", b"caf\xe9\n")),
        "data/corpus/latin1.txt: not UTF-8 text (byte 0xe9 at offset 3)",
    ),
    Case(
        "book-figure-linked-from-outside",
        "read root",
        book_tables(**{"fig.png": link_out_of_the_repository}),
        "results/bt/fig.png: is a link to",
    ),
    Case(
        "book-latin1-table",
        "read root",
        book_tables(**{"t.csv": "model,value\ncaf\u00e9,1\n".encode("latin-1")}),
        "results/bt/t.csv: not UTF-8 text (byte 0xe9 at offset 15, line 2)",
    ),
    Case(
        "book-folder-link-in-tables",
        "read root",
        book_tables(**{"more": lambda path, root: path.symlink_to(root / "results" / "bt" / "..")}),
        "results/bt/more: is a link to",
    ),
    Case(
        "book-fifo-in-tables",
        "special file",  # run in a subprocess with a timeout: a broken check would hang on the FIFO
        book_tables(**{"pipe.csv": lambda path, root: os.mkfifo(path)}),
        "results/bt/pipe.csv: is a FIFO (named pipe)",
    ),
    Case(
        "cache-explain-video-without-frames",
        "media",
        run_with(
            ["cache", "explain", "--instances", "data/v.jsonl", "--model", "random", "--benchmark", "moca"],
            lambda root: stored_cache(".cache/requests.sqlite"),
        ),
        "data/v.jsonl, record v0, field 'frames': a video_text instance needs sampled frames",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)
