"""Raw-source acquisition: verified, resumable downloads (``socialbench.acquire.download``) and safe
archive extraction (``socialbench.acquire.archive``); each benchmark knows its own sources' layout.

The ``download`` function is deliberately not re-exported here: it would shadow the
``socialbench.acquire.download`` module (and break ``mock.patch`` targets inside it). Import it as
``from socialbench.acquire.download import download``.
"""

from socialbench.acquire.archive import UnsafeArchive, check_archive, extract
from socialbench.acquire.download import ChecksumMismatch, DownloadError, copy_local

__all__ = [
    "ChecksumMismatch",
    "DownloadError",
    "UnsafeArchive",
    "check_archive",
    "copy_local",
    "extract",
]
