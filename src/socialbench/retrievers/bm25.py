"""``bm25``: an offline BM25 retriever over a local corpus folder (``bm25s``, extra ``retrieval``).

The corpus is every ``.txt``, ``.md`` and ``.jsonl`` file under ``options.corpus``; a link out of the folder,
or a FIFO, device or socket, is an error before anything is read (another file's text would reach prompts).
Text and Markdown split into passages at blank lines, a lone ``# Title`` block titling those after it; JSON
lines hold ``{"text"[, "id", "title", "source"]}``; ids are ``<relative path>#<n or id>``. A passage over
:data:`MAX_PASSAGE_CHARS` is split (``<id>~1``, ...), and the limit joins the identity."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.io import read_file_text, read_jsonl_lines
from socialbench.core.paths import special_file, special_problem, within
from socialbench.core.retrieval import Passage, Retriever

log = logging.getLogger("socialbench.retrievers.bm25")

SUFFIXES = (".txt", ".md", ".jsonl")
OPTIONS = {"corpus", "k1", "b"}
JSONL_KEYS = {"text", "id", "title", "source"}
#: A Markdown heading (``#`` to ``######``, then a space): "#tag text" is a hashtag, not a heading.
HEADING = re.compile(r"^#{1,6}\s+(?P<title>\S.*)$")
#: Longest passage in characters (about 1,000 tokens: k passages stay far below a model's context).
MAX_PASSAGE_CHARS = 4000


def _outside(entry: Path, root: Path) -> DataError:
    """The error for a link in the corpus that leads out of it (or to nothing)."""
    target = entry.resolve()
    how = f"links to {target}, outside the corpus folder" if target.exists() else "is a symlink to nothing"
    return DataError(str(entry), f"{how}; refused so that no other file is read (copy the file into {root} instead)")


def corpus_files(folder: Path) -> list[Path]:
    """The corpus files of ``folder``, sorted by relative path. Walked without following links: a link
    is read only when it leads to a regular file inside the folder; a link out of it (or to nothing)
    and a FIFO, device or socket are a DataError naming the entry (a FIFO would hang the reader)."""
    root = folder.resolve()
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        for name in sorted(dirnames):
            entry = here / name
            if entry.is_symlink() and not within(entry.resolve(), root):
                raise _outside(entry, folder)
        for name in filenames:
            entry = here / name
            if entry.is_symlink() and not (entry.exists() and within(entry.resolve(), root)):
                raise _outside(entry, folder)
            kind = special_file(entry)
            if kind is not None:
                raise DataError(str(entry), special_problem(kind, "corpus file"))
            if entry.suffix in SUFFIXES and entry.is_file():
                out.append(entry)
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix())


def _pieces(text: str, limit: int) -> list[str]:
    """``text`` cut at spaces into pieces of at most ``limit`` characters (a longer word where it falls)."""
    pieces: list[str] = []
    current = ""
    for word in text.split(" "):
        while len(word) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:limit])
            word = word[limit:]
        if current and len(current) + 1 + len(word) > limit:
            pieces.append(current)
            current = ""
        current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def split_long(passages: list[Passage], limit: int = MAX_PASSAGE_CHARS) -> tuple[list[Passage], list[str]]:
    """The passages with each longer than ``limit`` split (``<id>~1``, ...), and a note per split (pure)."""
    out: list[Passage] = []
    notes: list[str] = []
    for p in passages:
        if len(p.text) <= limit:
            out.append(p)
            continue
        pieces = _pieces(p.text, limit)
        notes.append(
            f"{p.doc_id}: {len(p.text)} characters, split into {len(pieces)} passages of at most {limit}"
            " (retrievers.bm25.MAX_PASSAGE_CHARS)"
        )
        out += [Passage(f"{p.doc_id}~{i}", piece, p.title, p.source) for i, piece in enumerate(pieces, 1)]
    return out, notes


def text_passages(text: str, rel: str) -> list[Passage]:
    """The passages of a text or Markdown file (pure)."""
    out: list[Passage] = []
    title: str | None = None
    for block in (b.strip() for b in text.replace("\r\n", "\n").split("\n\n")):
        if not block:
            continue
        heading = HEADING.match(block)
        if heading and "\n" not in block:
            title = heading["title"].strip()
            continue
        out.append(Passage(doc_id=f"{rel}#{len(out) + 1}", text=" ".join(block.split()), title=title, source=rel))
    return out


def jsonl_passages(path: Path, rel: str) -> list[Passage]:
    out: list[Passage] = []
    for jl in read_jsonl_lines(path):
        where = f"line {jl.line}"
        if jl.record is None:
            raise DataError(str(path), jl.problem or "not a JSON object", record=where)
        rec = jl.record
        unknown = sorted(set(rec) - JSONL_KEYS)
        if unknown:
            raise DataError(str(path), f"unknown key(s) {unknown}; a passage has {sorted(JSONL_KEYS)}", record=where)
        if not isinstance(rec.get("text"), str) or not rec["text"].strip():
            raise DataError(str(path), "must be a non-empty string", record=where, field="text")
        for key in ("id", "title", "source"):
            if key in rec and not (isinstance(rec[key], str) and rec[key].strip()):
                raise DataError(str(path), "must be a non-empty string or absent", record=where, field=key)
        text = " ".join(rec["text"].split())
        out.append(Passage(f"{rel}#{rec.get('id', jl.line)}", text, rec.get("title"), rec.get("source", rel)))
    return out


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, lower=True, stopwords="en", return_ids=False, show_progress=False)


def rank(scores: list[float], ids: list[str], k: int) -> list[int]:
    """Indices of the best ``k`` positive scores, ties broken by id (pure)."""
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], ids[i]))
    return order[:k]


class BM25Retriever(Retriever):
    """BM25 over a local corpus folder (options ``corpus``, ``k1`` default 1.5, ``b`` default 0.75)."""

    def __init__(self, options: dict[str, Any] | None = None, where: str = "retrieval"):
        super().__init__(options, where)
        unknown = sorted(set(self.options) - OPTIONS)
        if unknown:
            raise ConfigError(f"{where}.options: unknown key(s) {unknown}; bm25 takes {sorted(OPTIONS)}")
        corpus = self.options.get("corpus")
        if not isinstance(corpus, str) or not corpus:
            raise ConfigError(f"{where}.options.corpus: the corpus folder is required (a path), got {corpus!r}")
        self.folder = Path(corpus)
        if not self.folder.is_dir():
            kind = special_file(self.folder)
            what = (
                f"is {kind}, not the corpus folder"
                if kind
                else "is a file, not a folder (the corpus is a folder of .txt, .md and .jsonl files)"
                if self.folder.exists()
                else "no such folder"
            )
            raise ConfigError(f"{where}.options.corpus: {corpus}: {what}")
        k1, b = float(self.number_option("k1", 1.5)), float(self.number_option("b", 0.75))
        files = corpus_files(self.folder)
        self.passages: list[Passage] = []
        hashes = []
        for path in files:
            rel = path.relative_to(self.folder).as_posix()
            hashes.append([rel, sha256_file(path)])
            if path.suffix == ".jsonl":
                self.passages += jsonl_passages(path, rel)
            else:
                self.passages += text_passages(read_file_text(path, "corpus file"), rel)
        if not self.passages:
            raise ConfigError(f"{where}.options.corpus: {corpus}: no passages in its {', '.join(SUFFIXES)} files")
        self.passages, self.split_notes = split_long(self.passages)
        for note in self.split_notes:
            log.warning("%s: corpus passage %s", self.folder, note)
        ids = [p.doc_id for p in self.passages]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[0]
            raise DataError(str(self.folder), f"passage id {dup!r} occurs more than once")
        self._corpus_sha256 = sha256_json(hashes)
        self._ids = ids
        import bm25s

        self._index = bm25s.BM25(k1=k1, b=b)
        self._index.index(
            _tokenize([p.text if not p.title else f"{p.title} {p.text}" for p in self.passages]), show_progress=False
        )

    def corpus_sha256(self) -> str:
        return self._corpus_sha256

    def identity(self) -> dict[str, Any]:
        # The folder's content is in the corpus hash; where it lies is not (a moved corpus is the same).
        config = {k: v for k, v in self.options.items() if k != "corpus"}
        identity = {"retriever": self.name, "config_sha256": sha256_json(config), "corpus_sha256": self._corpus_sha256}
        if self.split_notes:  # only then: a corpus with no long passage keeps the identity it always had
            identity["max_passage_chars"] = MAX_PASSAGE_CHARS
        return identity

    def search(self, query: str, k: int) -> list[Passage]:
        tokens = _tokenize([query])[0]
        if not tokens or k < 1:
            return []
        scores = [float(s) for s in self._index.get_scores(tokens)]
        return [
            Passage(p.doc_id, p.text, p.title, p.source, round(scores[i], 6))
            for i in rank(scores, self._ids, k)
            for p in (self.passages[i],)
        ]
