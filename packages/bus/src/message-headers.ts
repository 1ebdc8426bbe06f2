// The headers a publisher gives a message (see PublishOptions): what every adapter carries.

/** Names of the bus's own headers (attempts, reasons, the broker's counts): never a publisher's. */
const BUS_OWN = /^x-/i;

/**
 * The publisher's headers among `raw` (a publish's options, or an AMQP message's header table):
 * text values under names that are not the bus's own. Undefined when there are none.
 */
export function carriedHeaders(
  raw: Readonly<Record<string, unknown>> | undefined,
): Record<string, string> | undefined {
  if (!raw) return undefined;
  let carried: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(raw)) {
    if (BUS_OWN.test(name)) continue;
    // AMQP hands a long string back as a Buffer when it was sent as bytes.
    const text =
      typeof value === "string" ? value : Buffer.isBuffer(value) ? value.toString("utf8") : undefined;
    if (text !== undefined) (carried ??= {})[name] = text;
  }
  return carried;
}
