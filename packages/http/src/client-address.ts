import type { Request } from "express";
import ipaddr from "ipaddr.js";

/**
 * The address per-address limits count against: the client's address as Express sees it (through
 * the proxies LOCUS_TRUST_PROXY trusts, and no others), with an IPv4 address written as IPv6
 * (`::ffff:192.0.2.1`) read as IPv4, and an IPv6 address reduced to its /64. One subscriber is
 * usually handed a whole /64, so counting single IPv6 addresses would give anyone unlimited tries.
 */
export function clientAddress(req: Request): string {
  const raw = req.ip ?? req.socket.remoteAddress;
  if (!raw || !ipaddr.isValid(raw)) return "unknown";
  let address = ipaddr.parse(raw);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) address = address.toIPv4Address();
  if (address instanceof ipaddr.IPv4) return address.toString();
  const network = address.parts.slice(0, 4).concat([0, 0, 0, 0]);
  return `${new ipaddr.IPv6(network).toString()}/64`;
}
