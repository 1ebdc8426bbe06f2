import { createServer, type Server } from "node:http";
import type { Stoppable } from "@locus/runtime";
import { createGatewayApp, type GatewayDeps } from "./app.ts";

export interface GatewayModule extends Stoppable {
  server: Server;
  /** The port actually bound (useful when configured as 0). */
  port: number;
}

/** Serves the gateway app; stopping waits for requests in flight, then closes idle connections. */
export async function startGatewayModule(
  deps: GatewayDeps & { host: string; port: number },
): Promise<GatewayModule> {
  const server = createServer(createGatewayApp(deps));
  // Slow or stalled clients must not hold a connection forever.
  server.requestTimeout = 10 * 60_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  // Requests Node rejects before express sees them (oversized headers, broken HTTP) still get a
  // JSON body, like every other error.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
    const status = tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request";
    const body = JSON.stringify({
      detail: tooLarge
        ? "The request line or headers are too large (a very long URL?): keep them under 16 KB."
        : "The request is not valid HTTP.",
    });
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(deps.port, deps.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : deps.port;
  deps.logger.info({ url: `http://${deps.host}:${port}` }, "gateway listening");
  let stopped: Promise<void> | null = null;
  return {
    server,
    port,
    // Idempotent: the process stops the gateway first, and the module manager again later.
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Give requests in flight a moment, then cut what is left.
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      })),
  };
}
