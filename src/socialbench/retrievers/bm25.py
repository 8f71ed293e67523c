"""``bm25``: an offline BM25 retriever over a local corpus folder (the ``bm25s`` package, extra
``retrieval``).

The corpus is every ``.txt``, ``.md`` and ``.jsonl`` file under ``options.corpus``, read in the order
of their relative paths. A text or Markdown file is split into passages at blank lines; a block that is
only a Markdown heading (``# Title``) is no passage but the title of the passages after it. A JSON-lines
file holds one passage per line: ``{"text"[, "id", "title", "source"]}``. A passage's id is
``<relative path>#<n>`` (its number in the file, from 1) or ``<relative path>#<id>``.

The index is built in that order with fixed settings (lower-cased words of two or more characters,
English stop words removed, no stemming; Lucene's BM25 with ``k1`` and ``b``), so the same corpus
gives the same index. Results are sorted by score, ties broken by passage id; a passage that shares no
word with the query is never returned.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.retrieval import Passage, Retriever

SUFFIXES = (".txt", ".md", ".jsonl")
OPTIONS = {"corpus", "k1", "b"}
JSONL_KEYS = {"text", "id", "title", "source"}
#: A Markdown heading (``#`` to ``######``, then a space): "#tag text" is a hashtag, not a heading.
HEADING = re.compile(r"^#{1,6}\s+(?P<title>\S.*)$")


def corpus_files(folder: Path) -> list[Path]:
    return sorted((p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES), key=lambda p: p.as_posix())


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
    from socialbench.core.io import read_jsonl_lines

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
        out.append(
            Passage(
                doc_id=f"{rel}#{rec.get('id', jl.line)}",
                text=" ".join(rec["text"].split()),
                title=rec.get("title"),
                source=rec.get("source", rel),
            )
        )
    return out


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, lower=True, stopwords="en", return_ids=False, show_progress=False)


def rank(scores: list[float], ids: list[str], k: int) -> list[int]:
    """Indices of the best ``k`` positive scores, ties broken by id (pure)."""
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], ids[i]))
    return order[:k]


class BM25Retriever(Retriever):
    """BM25 over a local corpus folder (options: ``corpus``, the folder; ``k1``, default 1.5; ``b``,
    default 0.75)."""

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
            raise ConfigError(f"{where}.options.corpus: {corpus}: no such folder")
        for key, default in (("k1", 1.5), ("b", 0.75)):
            value = self.options.get(key, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{where}.options.{key}: expected a number >= 0, got {value!r}")
        files = corpus_files(self.folder)
        self.passages: list[Passage] = []
        hashes = []
        for path in files:
            rel = path.relative_to(self.folder).as_posix()
            hashes.append([rel, sha256_file(path)])
            if path.suffix == ".jsonl":
                self.passages += jsonl_passages(path, rel)
            else:
                from socialbench.core.io import decode_utf8, read_file_bytes

                self.passages += text_passages(decode_utf8(read_file_bytes(path, "corpus file"), str(path)), rel)
        if not self.passages:
            raise ConfigError(f"{where}.options.corpus: {corpus}: no passages in its {', '.join(SUFFIXES)} files")
        ids = [p.doc_id for p in self.passages]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[0]
            raise DataError(str(self.folder), f"passage id {dup!r} occurs more than once")
        self._corpus_sha256 = sha256_json(hashes)
        self._ids = ids
        import bm25s

        self._index = bm25s.BM25(k1=float(self.options.get("k1", 1.5)), b=float(self.options.get("b", 0.75)))
        self._index.index(
            _tokenize([p.text if not p.title else f"{p.title} {p.text}" for p in self.passages]), show_progress=False
        )

    def corpus_sha256(self) -> str:
        return self._corpus_sha256

    def identity(self) -> dict[str, Any]:
        # The folder's content is in the corpus hash; where it lies is not (a moved corpus is the same).
        config = {k: v for k, v in self.options.items() if k != "corpus"}
        return {"retriever": self.name, "config_sha256": sha256_json(config), "corpus_sha256": self._corpus_sha256}

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
