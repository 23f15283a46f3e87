"""Read the certificate pins that the pinkeeper daemon publishes and enforce them on top of
normal TLS verification. Standard library only; see docs/readers.md in the pinkeeper repository."""

from .cache import DEFAULT_CACHE_DIRECTORY, CacheFile, CacheReader, CacheReaderError, read_fallback
from .pins import DomainsConfig, Pin, PinListError
from .validation import Verdict

__all__ = [
    "CacheFile", "CacheReader", "CacheReaderError", "DEFAULT_CACHE_DIRECTORY", "DomainsConfig",
    "Pin", "PinListError", "Verdict", "read_fallback",
]
__version__ = "0.1.0"
