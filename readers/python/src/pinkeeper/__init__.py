"""Read the certificate pins that the pinkeeper daemon publishes and enforce them on top of
normal TLS verification. Standard library only; see docs/readers.md in the pinkeeper repository."""

from .cache import DEFAULT_CACHE_DIRECTORY, CacheFile, CacheReader, read_fallback
from .errors import ERROR_KINDS, CacheReaderError
from .host import canonical_host
from .pins import DomainsConfig, Pin, PinListError
from .validation import Verdict

__all__ = [
    "CacheFile", "CacheReader", "CacheReaderError", "DEFAULT_CACHE_DIRECTORY", "DomainsConfig", "ERROR_KINDS",
    "Pin", "PinListError", "Verdict", "canonical_host", "read_fallback",
]
__version__ = "0.1.0"
