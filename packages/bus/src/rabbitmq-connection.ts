// The bus's one connection to RabbitMQ: made on first use, rebuilt with back-off whenever it or
// any of its channels drops, and the confirmed publishing every send goes through.
//
// Why not amqp-connection-manager (5.0.0): its ChannelWrapper acks on whichever channel is current
// (`this._channel.ack(message)`), so a handler that finishes after a reconnection acks a delivery
// tag the new channel never gave out, and the broker closes that channel (406 PRECONDITION_FAILED);
// here a delivery is settled on its own channel or not at all (the broker requeues it). It also
// retries at one fixed interval, where a fleet of workers needs jittered back-off, and re-creates a
// lost channel on its own, where this bus rebuilds connection and channels together.

import amqp from "amqplib";
import type { ChannelModel, ConfirmChannel, Options } from "amqplib";
import { backoffDelay, type Logger } from "@locus/runtime";

export interface Live {
  connection: ChannelModel;
  publisher: ConfirmChannel;
  lost: boolean;
}

interface Waiter {
  resolve: (live: Live) => void;
  reject: (err: Error) => void;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable AMQP URL)";
  }
}

export interface ConnectionSettings {
  url: string;
  logger: Logger;
  exchange: string;
  operationTimeoutMs: number;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  connectionName: string;
}

/** What the connection asks of the bus's consumers when it is made again or lost. */
export interface ConnectionHooks {
  /** Declares and resumes every subscription on a new connection (a failure fails the connection). */
  resume(live: Live): Promise<void>;
  /** Forgets the channels every subscription had on a connection that is gone. */
  detach(live: Live): void;
  /** How many subscriptions there are, for the log line. */
  subscriptionCount(): number;
}

/** The connection and its channels as one: any of them dropping rebuilds it (see RabbitMqBus). */
export class RabbitMqConnection {
  private readonly logger: Logger;
  private readonly exchange: string;
  private readonly operationTimeoutMs: number;
  private readonly reconnectBaseMs: number;
  private readonly reconnectMaxMs: number;
  private readonly connectionName: string;
  private readonly displayUrl: string;

  /** The connection up now, if any (read by the bus and its consumers, set only here). */
  live: Live | undefined;
  private waiters = new Set<Waiter>();
  private started = false;
  private reconnecting = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private wakeReconnect: (() => void) | undefined;
  private lastError: string | undefined;
  /** Set by beginClose: nothing new starts. */
  closing = false;
  /** Set by finishClose, once handlers have finished: the connection is being closed. */
  closed = false;
  // Topology changes (connecting, subscribing) run one at a time, so a subscription is declared
  // exactly once on each connection, however a reconnection and a subscribe() interleave.
  private exclusiveTail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: ConnectionSettings,
    private readonly hooks: ConnectionHooks,
  ) {
    this.logger = settings.logger;
    this.exchange = settings.exchange;
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.reconnectBaseMs = settings.reconnectBaseMs;
    this.reconnectMaxMs = settings.reconnectMaxMs;
    this.connectionName = settings.connectionName;
    this.displayUrl = withoutPassword(settings.url);
  }

  /** Stops reconnecting, and fails whoever waits for a connection. */
  beginClose(): void {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    this.wakeReconnect?.();
    this.rejectWaiters(new Error("Bus is closed"));
  }

  /** Once handlers have finished: lets a reconnection under way end, then closes the connection. */
  async finishClose(): Promise<void> {
    // Let a reconnection that was already underway finish, so its connection is closed too.
    await this.exclusive(() => Promise.resolve());
    this.closed = true;
    const live = this.live;
    this.live = undefined;
    if (live) {
      live.lost = true;
      try {
        await live.connection.close();
      } catch (err) {
        this.logger.debug({ err }, "closing the RabbitMQ connection failed");
      }
    }
  }

  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    this.scheduleReconnect(0);
  }

  private scheduleReconnect(firstDelayMs: number): void {
    if (this.reconnecting || this.closing) return;
    this.reconnecting = true;
    void this.reconnectLoop(firstDelayMs);
  }

  private async reconnectLoop(firstDelayMs: number): Promise<void> {
    let delay = firstDelayMs;
    for (let attempt = 1; ; attempt++) {
      if (delay > 0) await this.pause(delay);
      if (this.closing) break;
      try {
        const live = await this.exclusive(() => this.establish());
        // Cleared in the same tick as `live` is set: a loss right after this starts a new loop.
        this.reconnecting = false;
        this.lastError = undefined;
        this.logger.info(
          { url: this.displayUrl, attempt, subscriptions: this.hooks.subscriptionCount() },
          "connected to RabbitMQ",
        );
        for (const waiter of this.waiters) waiter.resolve(live);
        this.waiters.clear();
        return;
      } catch (err) {
        this.lastError = errorMessage(err);
        // Jittered (half to all of the ceiling), so a fleet of workers does not reconnect in lockstep.
        delay = backoffDelay(attempt, {
          baseMs: this.reconnectBaseMs,
          maxMs: this.reconnectMaxMs,
          jitter: true,
        });
        this.logger.warn(
          { url: this.displayUrl, attempt, retryInMs: delay, reason: this.lastError },
          "cannot connect to RabbitMQ; retrying",
        );
      }
    }
    this.reconnecting = false;
  }

  /** Sleeps, but wakes at once when the bus closes. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.reconnectTimer = setTimeout(resolve, ms);
      this.wakeReconnect = resolve;
    });
  }

  private async establish(): Promise<Live> {
    if (this.closing) throw new Error("Bus is closed");
    const connection = await amqp.connect(this.settings.url, {
      clientProperties: { connection_name: this.connectionName },
      timeout: Math.min(this.operationTimeoutMs, 10_000),
    });
    const live: Live = { connection, publisher: undefined as unknown as ConfirmChannel, lost: false };
    connection.on("error", (err: Error) => {
      this.logger.warn({ reason: err.message }, "RabbitMQ connection error");
    });
    connection.on("close", (err?: Error) => {
      // Channels report their closing first, without the broker's reason; this has it.
      if (err && !this.closing) this.logger.warn({ reason: err.message }, "RabbitMQ closed the connection");
      this.connectionLost(live, err);
    });
    connection.on("blocked", (reason: string) => {
      // Publishes wait for confirms (up to their timeout) while the broker is short of memory or disk.
      this.logger.warn({ reason }, "RabbitMQ blocked this connection's publishers");
    });
    connection.on("unblocked", () => this.logger.info("RabbitMQ unblocked this connection's publishers"));
    try {
      const publisher = await connection.createConfirmChannel();
      live.publisher = publisher;
      publisher.on("error", (err: Error) => {
        this.logger.warn({ reason: err.message }, "RabbitMQ publishing channel error");
      });
      publisher.on("close", () => this.connectionLost(live, new Error("publishing channel closed")));
      await publisher.assertExchange(this.exchange, "topic", { durable: true });
      await this.hooks.resume(live);
      if (live.lost) throw new Error("connection lost while declaring the topology");
      if (this.closing) throw new Error("Bus is closed");
    } catch (err) {
      live.lost = true;
      this.hooks.detach(live);
      await connection.close().catch(() => undefined);
      throw err;
    }
    this.live = live;
    return live;
  }

  /**
   * Any channel or the connection dropping rebuilds everything: one recovery path, and no
   * delivery can be acked on a channel other than the one it came from.
   */
  connectionLost(live: Live, err?: unknown): void {
    if (live.lost) return;
    live.lost = true;
    if (this.live === live) this.live = undefined;
    this.hooks.detach(live);
    // Only part of it may have failed (a channel); close the rest so the broker requeues its deliveries.
    void live.connection.close().catch(() => undefined);
    if (this.closing) return;
    this.logger.warn(
      { url: this.displayUrl, reason: err === undefined ? "closed" : errorMessage(err) },
      "lost the RabbitMQ connection; reconnecting",
    );
    this.scheduleReconnect(this.reconnectBaseMs);
  }

  waitForLive(deadline: number): Promise<Live> {
    // While closing, handlers still in flight may publish on the open connection.
    if (this.live) return Promise.resolve(this.live);
    if (this.closing) return Promise.reject(new Error("Bus is closed"));
    return new Promise<Live>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiters.delete(waiter);
          reject(new Error(this.unavailable(`not connected within ${this.operationTimeoutMs} ms`)));
        },
        Math.max(0, deadline - Date.now()),
      );
      const waiter: Waiter = {
        resolve: (live) => {
          clearTimeout(timer);
          resolve(live);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.add(waiter);
    });
  }

  private rejectWaiters(err: Error): void {
    for (const waiter of this.waiters) waiter.reject(err);
    this.waiters.clear();
  }

  unavailable(what: string): string {
    const cause = this.lastError ? ` (last error: ${this.lastError})` : "";
    return `RabbitMQ at ${this.displayUrl} is unavailable: ${what}${cause}`;
  }

  exclusive<R>(task: () => Promise<R>): Promise<R> {
    const run = this.exclusiveTail.then(task, task);
    this.exclusiveTail = run.catch(() => undefined);
    return run;
  }

  /** Resolves on the broker's confirm; rejects on a nack, a closed channel or the deadline. */
  confirmedPublish(
    live: Live,
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: Options.Publish,
    deadline: number,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(this.unavailable(`publish not confirmed within ${this.operationTimeoutMs} ms`))),
        Math.max(0, deadline - Date.now()),
      );
      try {
        live.publisher.publish(exchange, routingKey, content, properties, (err: unknown) => {
          clearTimeout(timer);
          if (!err) resolve();
          else if (errorMessage(err) === "message nacked") {
            reject(new Error(`RabbitMQ refused the message for ${routingKey} (nack)`));
          } else reject(err instanceof Error ? err : new Error(errorMessage(err)));
        });
      } catch (err) {
        // A closed channel throws synchronously.
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(errorMessage(err)));
      }
    });
  }
}
