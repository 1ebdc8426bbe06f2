import { createServer, type RequestListener, type Server } from "node:http";
import type { Logger, RunningModule } from "@locus/runtime";

export interface HttpServer extends RunningModule {
  server: Server;
  /** The port actually bound (useful when configured as 0). */
  port: number;
  url: string;
}

/**
 * Listens with sane limits; stopping is idempotent, waits for requests in flight, then closes
 * idle and, after a grace period, all connections.
 */
export async function startHttpServer(
  handler: RequestListener,
  options: {
    host: string;
    port: number;
    logger: Logger;
    /**
     * Largest request line and headers accepted (Node's default, 16 KiB, when not given). A process
     * that serves only calls between services takes more: the gateway passes on a client's whole
     * query (filters included) in a longer encoding than the client's own.
     */
    maxHeaderBytes?: number;
  },
): Promise<HttpServer> {
  const maxHeaderBytes = options.maxHeaderBytes ?? 16 * 1024;
  const server = createServer({ maxHeaderSize: maxHeaderBytes }, handler);
  // Slow or stalled clients must not hold a connection forever.
  server.requestTimeout = 10 * 60_000;
  server.headersTimeout = 30_000;
  // An idle kept-alive connection stays open longer than clients and proxies keep theirs (undici
  // about 4 s, load balancers commonly 60 s): with Node's 5 s, a client reusing a connection just
  // as the server closes it has its request cut (EPIPE mid-upload, seen in CI under load).
  server.keepAliveTimeout = 65_000;
  // Requests Node rejects before any route sees them (oversized headers, broken HTTP) still get a
  // JSON body, like every other error.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    // The client went away mid-request (closed before its declared body, or reset): nobody is
    // left to read an answer, and the request may already have one (a 401 sent before the body
    // ended), which a second response would follow as garbage.
    if (!socket.writable || err.code === "HPE_INVALID_EOF_STATE" || err.code === "ECONNRESET") {
      return socket.destroy();
    }
    const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
    const status = tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request";
    const body = JSON.stringify({
      detail: tooLarge
        ? `The request line or headers are too large (a very long URL?): keep them under ${Math.floor(maxHeaderBytes / 1024)} KB.`
        : "The request is not valid HTTP.",
    });
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  options.logger.info({ url }, "listening");
  let stopped: Promise<void> | null = null;
  return {
    server,
    port,
    url,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Give requests in flight a moment, then cut what is left.
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      })),
  };
}
