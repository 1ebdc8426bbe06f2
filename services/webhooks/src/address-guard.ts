import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import type { WebhookAddressKind } from "@locus/runtime";

/**
 * Where a webhook may go (SSRF defence). A receiver's URL is the account's to choose, and Locus
 * posts to it from inside the deployment: without this, an endpoint could point at the cluster's
 * own services, the database, or the cloud's metadata address (169.254.169.254). Every address a
 * host resolves to is checked, and the request then connects to the address that was checked, so a
 * second DNS answer (rebinding) cannot switch it.
 */

/** What kind of address it is; `public` is the only one always allowed. */
export type AddressKind = WebhookAddressKind | "public" | "unroutable";

function blocks(entries: [string, number, "ipv4" | "ipv6"][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of entries) list.addSubnet(network, prefix, type);
  return list;
}

const LOOPBACK = blocks([
  ["127.0.0.0", 8, "ipv4"],
  ["::1", 128, "ipv6"],
]);
const PRIVATE = blocks([
  ["10.0.0.0", 8, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  // Carrier-grade NAT, also used inside clouds and clusters.
  ["100.64.0.0", 10, "ipv4"],
  // Unique local addresses (fc00::/7), IPv6's private range.
  ["fc00::", 7, "ipv6"],
]);
const LINK_LOCAL = blocks([
  // Includes the cloud metadata address 169.254.169.254.
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
]);
/**
 * Never a receiver: unspecified, multicast, broadcast, reserved and documentation-only ranges.
 * Connecting to the unspecified 0.0.0.0 or :: reaches the local machine on Linux, but no receiver
 * is meant by it, so it is refused even where loopback is allowed.
 */
const UNROUTABLE = blocks([
  ["0.0.0.0", 8, "ipv4"],
  ["224.0.0.0", 4, "ipv4"],
  ["240.0.0.0", 4, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["ff00::", 8, "ipv6"],
  // The unspecified ::, IPv4-compatible addresses (deprecated) and the rest of ::/96.
  ["::", 96, "ipv6"],
]);

/**
 * `::ffff:10.0.0.1` (or `::ffff:a00:1`, or NAT64's `64:ff9b::a00:1`) is 10.0.0.1: checked as the
 * IPv4 address it carries.
 */
function unmapped(address: string): { address: string; type: "ipv4" | "ipv6" } {
  const version = isIP(address);
  if (version === 4) return { address, type: "ipv4" };
  const lower = address.toLowerCase();
  const dotted = /^(?:(?:0{1,4}:){5}|::)ffff:(\d+\.\d+\.\d+\.\d+)$|^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/.exec(
    lower,
  );
  const embedded = dotted?.[1] ?? dotted?.[2];
  if (embedded) return { address: embedded, type: "ipv4" };
  // NAT64 (64:ff9b::/96) too: a NAT64 gateway forwards it to the IPv4 address it carries.
  const hex = /^(?:::ffff|64:ff9b:):([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] && hex[2]) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, type: "ipv4" };
  }
  return { address: lower, type: "ipv6" };
}

/** The kind of an IP address (v4 or v6, IPv4-mapped IPv6 as its IPv4 address). */
export function addressKind(ip: string): AddressKind {
  if (isIP(ip) === 0) throw new Error(`not an IP address: ${ip}`);
  const { address, type } = unmapped(ip);
  if (LOOPBACK.check(address, type)) return "loopback";
  if (LINK_LOCAL.check(address, type)) return "link-local";
  if (PRIVATE.check(address, type)) return "private";
  if (UNROUTABLE.check(address, type)) return "unroutable";
  return "public";
}

export class RefusedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedAddressError";
  }
}

export interface ResolvedTarget {
  /** The address to connect to: one that was checked. */
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Checks webhook URLs and the addresses their hosts resolve to, allowing only public addresses
 * and the kinds the operator listed (LOCUS_WEBHOOK_ALLOW_ADDRESSES).
 */
export class AddressGuard {
  private readonly allowed: ReadonlySet<AddressKind>;

  constructor(
    allow: readonly WebhookAddressKind[],
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowed = new Set<AddressKind>(["public", ...allow]);
  }

  /**
   * The address to connect to for `url`'s host; throws RefusedAddressError when the host does not
   * resolve, or when any of its addresses is of a kind not allowed (one bad answer is enough: a
   * client might pick it).
   */
  async check(url: URL): Promise<ResolvedTarget> {
    // URL keeps IPv6 literals in brackets.
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    let answers: { address: string; family: number }[];
    if (isIP(host) !== 0) {
      answers = [{ address: host, family: isIP(host) }];
    } else {
      try {
        answers = await this.resolve(host);
      } catch {
        throw new RefusedAddressError(`the host ${host} could not be resolved`);
      }
      if (answers.length === 0) throw new RefusedAddressError(`the host ${host} could not be resolved`);
    }
    for (const answer of answers) {
      const kind = addressKind(answer.address);
      if (!this.allowed.has(kind)) {
        const what = kind === "unroutable" ? "an unspecified, multicast or reserved" : `a ${kind}`;
        throw new RefusedAddressError(
          `${host} resolves to ${what} address (${answer.address}), which webhooks may not be sent to` +
            (kind === "unroutable"
              ? ""
              : ` unless the operator allows it (LOCUS_WEBHOOK_ALLOW_ADDRESSES=${kind})`),
        );
      }
    }
    const first = answers[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}
