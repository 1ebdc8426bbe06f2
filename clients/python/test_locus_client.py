"""Tests of locus_client.py.

LiveServerTest runs against a real Locus: set LOCUS_URL and LOCUS_API_KEY (a live key) and run
``python3 -m unittest`` in this folder (packages/client/test/sdk.e2e.test.ts does, against the Locus
it starts). The others need no Locus: they run a small local http.server that answers 429 first,
so the retry path really waits and really sends again.
"""

import http.server
import os
import tempfile
import threading
import time
import unittest
import urllib.request
import uuid
from email.utils import formatdate

from locus_client import FileFailedError, LocusClient, LocusError, WaitTimeoutError, retry_after_seconds


def make_pdf(lines):
    """A one-page PDF with a text layer: each string a line, top to bottom (Helvetica, 12 pt)."""
    escape = lambda s: s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    text = "BT /F1 12 Tf 18 TL 72 740 Td " + " ".join(f"({escape(line)}) Tj T*" for line in lines) + " ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text.encode("latin-1")),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def write_temp(data, suffix):
    handle = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)
    with handle:
        handle.write(data)
    return handle.name


class RetryAfterParsingTest(unittest.TestCase):
    def test_seconds_and_http_dates(self):
        now = 1_767_225_600.0  # 2026-01-01T00:00:00Z
        self.assertEqual(retry_after_seconds("3", now), 3.0)
        self.assertEqual(retry_after_seconds("Thu, 01 Jan 2026 00:00:05 GMT", now), 5.0)
        self.assertEqual(retry_after_seconds("Thursday, 01-Jan-26 00:00:05 GMT", now), 5.0)
        self.assertEqual(retry_after_seconds("Thu Jan  1 00:00:05 2026", now), 5.0)
        self.assertEqual(retry_after_seconds("Wed, 31 Dec 2025 00:00:00 GMT", now), 0.0)
        self.assertIsNone(retry_after_seconds("soon", now))
        self.assertIsNone(retry_after_seconds("-1", now))
        self.assertIsNone(retry_after_seconds("\u00b2", now))  # a digit to str.isdigit(), not to HTTP
        self.assertIsNone(retry_after_seconds(None, now))


class LocalServerTest(unittest.TestCase):
    """Against a local http.server whose answers each test sets: 429 first, then 200."""

    @classmethod
    def setUpClass(cls):
        test = cls

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                test.seen.append((time.monotonic(), self.command, self.path, body))
                test.authorizations.append(self.headers.get("Authorization"))
                status, headers, payload = test.answer(len(test.seen) - 1)
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = handle_one

        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.client = LocusClient(f"http://127.0.0.1:{cls.server.server_address[1]}", "sk_live_local")

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        type(self).seen = []
        type(self).authorizations = []

    REFUSED = (429, {"Retry-After": "1"}, b'{"detail": "Rate limit exceeded"}')
    FILE = b'{"id": "f1", "status": "ready", "original_name": "a.pdf"}'

    def test_the_key_never_follows_a_redirect(self):
        port = self.server.server_address[1]
        # Another origin (localhost, not 127.0.0.1): a server that redirects must not receive the key.
        moved = (302, {"Location": f"http://localhost:{port}/moved"}, b"")
        type(self).answer = staticmethod(lambda n: moved if n == 0 else (200, {}, self.FILE))
        self.client.get_file("f1")
        self.assertEqual([path for _, _, path, _ in self.seen], ["/api/files/f1", "/moved"])
        self.assertEqual(self.authorizations, ["Bearer sk_live_local", None])

    def test_waits_the_seconds_retry_after_asks_then_sends_again(self):
        type(self).answer = staticmethod(lambda n: self.REFUSED if n == 0 else (200, {}, self.FILE))
        self.assertEqual(self.client.get_file("f1")["id"], "f1")
        self.assertEqual(len(self.seen), 2)
        self.assertGreaterEqual(self.seen[1][0] - self.seen[0][0], 0.99)

    def test_waits_until_the_http_date_retry_after_names(self):
        when = int(time.time()) + 2  # whole seconds: 1 to 2 s away
        refused = (429, {"Retry-After": formatdate(when, usegmt=True)}, b"{}")
        type(self).answer = staticmethod(lambda n: refused if n == 0 else (200, {}, b'{"results": [], "count": 0}'))
        self.client.search("tea")
        self.assertGreaterEqual(time.time(), when - 0.01)
        self.assertEqual(len(self.seen), 2)

    def test_an_upload_is_sent_whole_again_with_progress_from_zero(self):
        type(self).answer = staticmethod(
            lambda n: (429, {"Retry-After": "0"}, b"{}") if n == 0 else (200, {}, b'{"file": %s}' % self.FILE)
        )
        path = write_temp(b"x" * (150 * 1024), ".pdf")
        self.addCleanup(os.remove, path)
        progress = []
        record = self.client.upload(
            path, metadata={"team": "search"}, on_progress=lambda s, t: progress.append((s, t)), name='naïve "1".pdf'
        )
        self.assertEqual(record["id"], "f1")
        once = [(65536, 153600), (131072, 153600), (153600, 153600)]
        self.assertEqual(progress, once + once)
        for _, method, path_, body in self.seen:
            self.assertEqual((method, path_), ("POST", "/api/files/upload"))
            self.assertIn(b"x" * (150 * 1024), body)
            self.assertLess(body.index(b'name="metadata"'), body.index(b'name="file"'))
            self.assertIn('filename="naïve %221%22.pdf"'.encode("utf-8"), body)
            self.assertIn(b"filename*=UTF-8''na%C3%AFve%20%221%22.pdf", body)

    def test_the_last_429_is_raised_once_max_retries_are_spent(self):
        type(self).answer = staticmethod(lambda n: (429, {"Retry-After": "0"}, b'{"detail": "slow down"}'))
        client = LocusClient(self.client.base_url, "sk_live_local", max_retries=2)
        with self.assertRaises(LocusError) as caught:
            client.search("tea", limit=3, file_id=["a", "b"], metadata={"team": "x y"})
        self.assertEqual((caught.exception.status, caught.exception.detail), (429, "slow down"))
        self.assertEqual(caught.exception.retry_after, 0.0)
        self.assertEqual(len(self.seen), 3)
        self.assertEqual(self.seen[0][2], "/api/search?q=tea&limit=3&file_id=a&file_id=b&metadata.team=x+y")

    def test_a_wait_longer_than_max_retry_delay_is_raised_at_once(self):
        type(self).answer = staticmethod(lambda n: (429, {"Retry-After": "86400"}, b'{"detail": "quota"}'))
        with self.assertRaises(LocusError) as caught:
            self.client.list_files()
        self.assertEqual(caught.exception.retry_after, 86400.0)
        self.assertEqual(len(self.seen), 1)

    def test_wait_until_ready_times_out_with_the_last_record(self):
        type(self).answer = staticmethod(lambda n: (200, {}, b'{"id": "f1", "status": "processing"}'))
        with self.assertRaises(WaitTimeoutError) as caught:
            self.client.wait_until_ready("f1", timeout=0.3, poll_interval=0.1)
        self.assertEqual(caught.exception.file["status"], "processing")
        self.assertGreaterEqual(len(self.seen), 3)


class LiveServerTest(unittest.TestCase):
    """Against a running Locus: LOCUS_URL and LOCUS_API_KEY (a live key)."""

    @classmethod
    def setUpClass(cls):
        url, key = os.environ.get("LOCUS_URL"), os.environ.get("LOCUS_API_KEY")
        if not url or not key:
            raise unittest.SkipTest("set LOCUS_URL and LOCUS_API_KEY (a live key) to run against a Locus")
        cls.client = LocusClient(url, key)

    def upload_pdf(self, data, **options):
        path = write_temp(data, ".pdf")
        self.addCleanup(os.remove, path)
        return self.client.upload(path, **options)

    def test_upload_wait_search_list_preview_delete(self):
        word = "kestrel" + uuid.uuid4().hex[:10]
        lines = ["Python client test document", f"The {word} passage sits on line two.", "A third line."]
        pdf = make_pdf(lines)
        progress = []
        team = "py-" + uuid.uuid4().hex[:8]
        record = self.upload_pdf(
            pdf, metadata={"team": team}, on_progress=lambda sent, total: progress.append((sent, total))
        )
        self.assertIn(record["status"], ("pending", "processing"))
        self.assertEqual(progress[-1], (len(pdf), len(pdf)))

        # A hang detector: a loaded CI runner has taken more than 30 s over this one-page PDF.
        ready = self.client.wait_until_ready(record["id"], timeout=120, poll_interval=0.2)
        self.assertEqual((ready["status"], ready["page_count"]), ("ready", 1))
        self.assertEqual(ready["metadata"], {"team": team})

        found = self.client.search(word, limit=5, mode="quick")
        self.assertEqual(found["count"], 1)
        hit = found["results"][0]
        self.assertEqual(hit["file_id"], record["id"])
        self.assertIn(word, hit["content"])
        self.assertEqual(hit["locator"]["page"], 1)
        self.assertLessEqual(hit["locator"]["line"], 2)
        self.assertGreaterEqual(hit["locator"]["line_end"], 2)
        # Filters the generated API knows by name only: sent as they are.
        self.assertEqual(self.client.search(word, metadata={"team": team}, file_id=[record["id"]])["count"], 1)
        self.assertEqual(self.client.search(word, metadata={"team": team + "-other"})["count"], 0)

        page = self.client.list_files(metadata={"team": team})
        self.assertEqual([f["id"] for f in page["files"]], [record["id"]])
        self.assertIsNone(page["next_cursor"])

        link = self.client.preview_url(record["id"])["url"]
        with urllib.request.urlopen(link, timeout=10) as response:
            self.assertEqual(response.read(), pdf)

        self.assertEqual(self.client.delete_file(record["id"])["id"], record["id"])
        with self.assertRaises(LocusError) as caught:
            self.client.get_file(record["id"])
        self.assertEqual(caught.exception.status, 404)

    def test_a_file_that_fails_raises_file_failed_error_with_its_reason(self):
        record = self.upload_pdf(b"%PDF-1.4\n" + b"\x00not a pdf body" * 50)
        with self.assertRaises(FileFailedError) as caught:
            self.client.wait_until_ready(record["id"], timeout=120, poll_interval=0.2)
        self.assertEqual(caught.exception.error["code"], "pdf_corrupt")
        self.client.delete_file(record["id"])

    def test_a_422_carries_fastapi_detail(self):
        with self.assertRaises(LocusError) as caught:
            self.client.search("tea", limit=0)
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.detail[0]["loc"], ["query", "limit"])

    def test_an_unknown_key_is_refused(self):
        client = LocusClient(self.client.base_url, "sk_live_" + "0" * 40)
        with self.assertRaises(LocusError) as caught:
            client.list_files()
        self.assertEqual(caught.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
