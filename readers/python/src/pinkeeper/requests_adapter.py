"""Pins for `requests`: mount `PinnedHTTPAdapter` for https:// on a session.

    session.mount("https://", PinnedHTTPAdapter(reader))

The adapter hands urllib3 a `pinkeeper.tls.pinned_context`, so chain and host name are verified
as usual and the pins are checked right after the handshake. Never combine it with urllib3's
`assert_fingerprint` or `assert_hostname` (they turn host-name checking off) or `verify=False`
(chain verification off): the pinned context refuses the change, so every such request fails
with PinningError (as `requests.exceptions.SSLError`) and the context keeps verifying.
"""

from __future__ import annotations

from typing import Optional

from requests.adapters import HTTPAdapter

from .cache import CacheReader
from .tls import PinnedSSLContext, pinned_context


class PinnedHTTPAdapter(HTTPAdapter):
    def __init__(self, reader: CacheReader, *, context: Optional[PinnedSSLContext] = None,
                 cafile: Optional[str] = None, common_name: Optional[str] = None, **kwargs):
        self.pinned_context = context or pinned_context(reader, cafile=cafile, common_name=common_name)
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["ssl_context"] = self.pinned_context
        return super().init_poolmanager(*args, **kwargs)

    def proxy_manager_for(self, proxy, **kwargs):
        kwargs["ssl_context"] = self.pinned_context
        return super().proxy_manager_for(proxy, **kwargs)
