"""A client for Locus's public API, in one module and the standard library only.

    from locus_client import LocusClient

    locus = LocusClient("http://127.0.0.1:8080", "sk_live_...")
    record = locus.upload("report.pdf", on_progress=lambda sent, total: print(sent, total))
    locus.wait_until_ready(record["id"])
    for result in locus.search("quarterly revenue", limit=5)["results"]:
        print(result["score"], result["locator"], result["content"])

Every request is sent again after a 429 once the wait its Retry-After header asks for has passed
(seconds or an HTTP date), up to ``max_retries`` times; anything else Locus refuses raises
LocusError with the status and the parsed body.
"""

from __future__ import annotations

import email.utils
import json
import mimetypes
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import timezone
from typing import Any, Callable, Dict, Iterator, List, Optional

__all__ = ["LocusClient", "LocusError", "FileFailedError", "WaitTimeoutError", "retry_after_seconds"]

CHUNK_BYTES = 64 * 1024
"""Bytes handed to the connection per step, and so how often upload progress is reported."""


class LocusError(Exception):
    """Locus refused a request.

    ``status`` is the HTTP status, ``body`` the parsed JSON body (text when it was not JSON),
    ``detail`` Locus's sentence or, for a 422, FastAPI's list of issues (each with ``loc``, ``msg``
    and ``type``), and ``retry_after`` the seconds a Retry-After header asked for, if any.
    """

    def __init__(self, status: int, body: Any, retry_after: Optional[float] = None):
        self.status = status
        self.body = body
        self.detail = body.get("detail") if isinstance(body, dict) else None
        self.retry_after = retry_after
        if isinstance(self.detail, list):
            said = "; ".join(
                ".".join(str(part) for part in issue.get("loc", [])) + ": " + str(issue.get("msg"))
                for issue in self.detail
                if isinstance(issue, dict)
            )
        else:
            said = self.detail if isinstance(self.detail, str) else str(body)
        super().__init__(f"Locus answered {status}: {said}")


class FileFailedError(Exception):
    """wait_until_ready: the file ended ``failed``; ``error`` is its ``{"code", "message"}``."""

    def __init__(self, file: Dict[str, Any]):
        self.file = file
        self.error = file.get("error")
        reason = f"{self.error['code']}: {self.error['message']}" if self.error else "no reason given"
        super().__init__(f"File {file.get('id')} failed: {reason}")


class WaitTimeoutError(TimeoutError):
    """wait_until_ready: the file was not ready in time; ``file`` is the record last read."""

    def __init__(self, file: Dict[str, Any], timeout: float):
        self.file = file
        self.timeout = timeout
        super().__init__(f"File {file.get('id')} was still {file.get('status')} after {timeout} s")


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds a Retry-After header asks to wait (delay-seconds or an HTTP date), None if unreadable."""
    if value is None:
        return None
    value = value.strip()
    if re.fullmatch(r"[0-9]+", value):  # ASCII digits only: str.isdigit() also takes "²"
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # HTTP dates are GMT; the asctime form does not say so.
        when = when.replace(tzinfo=timezone.utc)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _query(params: Dict[str, Any]) -> str:
    """Query parameters: lists repeat the name, a dict is a group of dotted names (metadata.team=x)."""
    pairs: List[tuple] = []

    def add(name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, (list, tuple)):
            for item in value:
                add(name, item)
        elif isinstance(value, dict):
            for key, inner in value.items():
                add(f"{name}.{key}", inner)
        elif isinstance(value, bool):
            pairs.append((name, "true" if value else "false"))
        else:
            pairs.append((name, str(value)))

    for name, value in params.items():
        add(name, value)
    return urllib.parse.urlencode(pairs)


def _parse(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _disposition_name(name: str) -> str:
    """A multipart filename as browsers send it (UTF-8), plus RFC 5987's filename*, which servers prefer."""
    # Control characters and quotes as %XX: a raw one would break the part's header. A name that is
    # not valid Unicode (surrogates from a non-UTF-8 file system) is sent with replacements.
    name = name.encode("utf-8", errors="replace").decode("utf-8")
    quoted = re.sub(r'[\x00-\x1f\x7f"]', lambda m: f"%{ord(m.group()):02X}", name)
    return f"filename=\"{quoted}\"; filename*=UTF-8''{urllib.parse.quote(name, safe='')}"


class LocusClient:
    """A client for one Locus and one API key (``sk_live_...`` or ``sk_test_...``).

    ``max_retries``: retries of a request after a 429 before its LocusError is raised.
    ``max_retry_delay``: the longest Retry-After worth waiting for, in seconds; a longer one (a
    monthly upload quota that renews in days) is raised at once, with its ``retry_after``.
    ``timeout``: seconds any one network operation may take.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        max_retries: int = 3,
        max_retry_delay: float = 60.0,
        timeout: float = 60.0,
        on_retry: Optional[Callable[[int, float], None]] = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self.timeout = timeout
        self.on_retry = on_retry
        """Called as on_retry(attempt, seconds) before each wait for a 429's Retry-After."""
        self._authorization = f"Bearer {api_key}"

    # The requests.

    def _send(self, make_request: Callable[[], urllib.request.Request]) -> tuple:
        """Sends a fresh request for each attempt; returns (status, headers, parsed body) or raises LocusError."""
        attempt = 0
        while True:
            attempt += 1
            request = make_request()
            # Unredirected: urllib would otherwise copy the key into a redirect to any other host.
            request.add_unredirected_header("Authorization", self._authorization)
            request.add_header("Accept", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return response.status, response.headers, _parse(response.read())
            except urllib.error.HTTPError as refusal:
                with refusal:
                    body = _parse(refusal.read())
                wait = retry_after_seconds(refusal.headers.get("Retry-After"))
                if refusal.code != 429 or attempt > self.max_retries:
                    raise LocusError(refusal.code, body, wait) from None
                if wait is None:
                    wait = float(2 ** (attempt - 1))
                if wait > self.max_retry_delay:
                    raise LocusError(refusal.code, body, wait) from None
                if self.on_retry is not None:
                    self.on_retry(attempt, wait)
                time.sleep(wait)

    def _get(self, path: str, params: Optional[Dict[str, Any]] = None) -> tuple:
        query = _query(params or {})
        url = f"{self.base_url}{path}" + (f"?{query}" if query else "")
        return self._send(lambda: urllib.request.Request(url, method="GET"))

    @staticmethod
    def _file_path(file_id: str, suffix: str = "") -> str:
        return f"/api/files/{urllib.parse.quote(file_id, safe='')}{suffix}"

    # The API.

    def upload(
        self,
        path: str,
        metadata: Optional[Dict[str, Any]] = None,
        on_progress: Optional[Callable[[int, int], None]] = None,
        name: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Uploads a file from disk and returns its record (status ``pending``).

        The multipart body is streamed from the file in 64 KiB chunks; ``on_progress(sent, total)``
        is called as each chunk has been handed to the connection (http.client writes a chunk with
        sendall, and asks for the next only then), so it follows the bytes going out. A retried
        upload (after a 429) starts again from 0. ``metadata`` is kept with the file.
        """
        name = name if name is not None else os.path.basename(path)
        size = os.path.getsize(path)
        boundary = f"locus-{uuid.uuid4()}"
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        head = b""
        if metadata is not None:
            # Before the file: Locus reads the parts in order and needs it before it stores the file.
            head += (
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n"
                f"Content-Type: application/json\r\n\r\n{json.dumps(metadata)}\r\n"
            ).encode("utf-8")
        head += (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; {_disposition_name(name)}\r\n"
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode("utf-8")
        tail = f"\r\n--{boundary}--\r\n".encode("ascii")

        def body() -> Iterator[bytes]:
            yield head
            sent = 0
            with open(path, "rb") as source:
                # Exactly the announced Content-Length: a file that changed size since is an error,
                # not a malformed request.
                while sent < size:
                    chunk = source.read(min(CHUNK_BYTES, size - sent))
                    if not chunk:
                        raise OSError(f"{path} became shorter while it was uploaded")
                    yield chunk
                    # Asked for more: this chunk has gone to the connection.
                    sent += len(chunk)
                    if on_progress is not None:
                        on_progress(sent, size)
            yield tail

        def make_request() -> urllib.request.Request:
            return urllib.request.Request(
                f"{self.base_url}/api/files/upload",
                data=body(),
                method="POST",
                headers={
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                    "Content-Length": str(len(head) + size + len(tail)),
                },
            )

        return self._send(make_request)[2]["file"]

    def wait_until_ready(self, file_id: str, timeout: float = 300.0, poll_interval: float = 1.0) -> Dict[str, Any]:
        """Reads the file's record until it is ``ready`` and returns it.

        Raises FileFailedError (with the file's ``error``) when it failed, WaitTimeoutError when
        ``timeout`` seconds have passed.
        """
        deadline = time.monotonic() + timeout
        while True:
            file = self.get_file(file_id)
            if file.get("status") == "ready":
                return file
            if file.get("status") == "failed":
                raise FileFailedError(file)
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeoutError(file, timeout)
            time.sleep(min(poll_interval, left))

    def search(self, q: str, limit: Optional[int] = None, mode: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        """Searches the key's ready files: ``{"results": [...], "count": n, "mode": ...}``.

        Any other parameter is sent as it is, so filters and paging work by name:
        ``file_id=[a, b]`` repeats, ``metadata={"team": "x"}`` sends ``metadata.team=x``,
        ``offset=50``.
        """
        return self._get("/api/search", {"q": q, "limit": limit, "mode": mode, **params})[2]

    def get_file(self, file_id: str) -> Dict[str, Any]:
        return self._get(self._file_path(file_id))[2]

    def list_files(self, limit: Optional[int] = None, cursor: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        """One page of files, newest first: ``{"files": [...], "next_cursor": str or None}``.

        Pass ``next_cursor`` back as ``cursor`` for the next page; other parameters (filters) are
        sent as in search.
        """
        _, headers, files = self._get("/api/files", {"limit": limit, "cursor": cursor, **params})
        return {"files": files, "next_cursor": headers.get("X-Next-Cursor")}

    def delete_file(self, file_id: str) -> Dict[str, Any]:
        path = self._file_path(file_id)
        return self._send(lambda: urllib.request.Request(f"{self.base_url}{path}", method="DELETE"))[2]

    def preview_url(self, file_id: str) -> Dict[str, Any]:
        """A signed link that shows the file for an hour without the key: ``{"url", "expires_at", ...}``."""
        return self._get(self._file_path(file_id, "/preview-url"))[2]
