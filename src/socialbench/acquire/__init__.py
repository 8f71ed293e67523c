"""Raw-source acquisition: verified, resumable downloads and safe archive extraction. ``download`` is not
re-exported: it would shadow the ``socialbench.acquire.download`` module (and ``mock.patch`` targets)."""

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
