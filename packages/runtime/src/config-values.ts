// How a setting is declared and read: its meta (variable, default, description), and the parsers
// the schema in config.ts uses for numbers, flags, URLs, secrets, proxies, targets and languages.

import { isIP } from "node:net";
import { EXTRACTOR_TARGETS } from "@locus/contracts";
import { z } from "zod";

/** What LOCUS_TARGETS may name: everything, or a module (an extractor per kind of file: EXTRACTORS). */
export const TARGETS = [
  "all",
  "gateway",
  "files",
  ...EXTRACTOR_TARGETS,
  "indexer",
  "encoder",
  "search",
  "webhooks",
] as const;
export type Target = (typeof TARGETS)[number];

/** What the schema knows of one environment variable besides how to parse it. */
export interface SettingMeta {
  env: string;
  /** One line: what the setting does. */
  description: string;
  /** What an unset variable stands for, spelled as the variable would be; parsed like a set value. */
  default?: string | number;
  /**
   * How the README's table states the default where the literal value would mislead (it depends
   * on the machine), or where there is none and unset means more than "none".
   */
  unset?: string;
  /**
   * What an unset variable stands for with LOCUS_SHAPE=split (the shared adapters), where it
   * differs from `default`.
   */
  splitDefault?: string;
}

/** A setting as the README test and error messages see it: its place in LocusConfig, and its meta. */
export interface Setting extends SettingMeta {
  path: string[];
}

/** A setting's default: the value an unset variable stands for, or what leaving it unset means. */
export type Fallback = string | number | Pick<SettingMeta, "default" | "unset" | "splitDefault">;

/** No default: an unset variable means what `text` says. */
export const unset = (text: string): Fallback => ({ unset: text });
/** No default, and unset means none: no such server, no key, no limit of one's own. */
export const NONE = unset("none");

export const settingMeta = z.registry<SettingMeta>();

/**
 * One environment variable, declared in the README table's order: variable, default, then how it
 * is read and what it means. `parse` receives the variable's text, or the default's when it is
 * unset (undefined when there is no default).
 */
export function setting<Out>(env: string, fallback: Fallback, parse: z.ZodType<Out>, description: string) {
  const meta: SettingMeta =
    typeof fallback === "object"
      ? { env, description, ...fallback }
      : { env, description, default: fallback };
  const defaultText = meta.default === undefined ? undefined : String(meta.default);
  // A fresh schema per setting, so that one parser (secret, say) can serve two variables.
  const schema: z.ZodType<Out> = z.preprocess((value) => value ?? defaultText, parse);
  settingMeta.add(schema, meta);
  return schema;
}

/**
 * A whole number in [min, max]; blank counts as unset, like a missing variable. `fallback` is a
 * number, or an object whose default is one.
 */
export function integer(
  env: string,
  fallback: number | { default: number; unset: string },
  [min, max = Number.MAX_SAFE_INTEGER]: [number, number?],
  description: string,
) {
  const def = typeof fallback === "number" ? fallback : fallback.default;
  const parse = z.string().transform((v, ctx) => {
    if (v.trim() === "") return def;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `must be an integer from ${min} to ${max}, got "${v}"` });
      return z.NEVER;
    }
    return n;
  });
  return setting(env, fallback, parse, description);
}

export const text = () => z.string().min(1);
export const flag = () => z.enum(["true", "false"]).transform((v) => v === "true");
export const httpUrl = () => z.url({ protocol: /^https?$/ });
/** A base URL, kept without its trailing slashes: paths are appended to it. */
export const baseUrl = () =>
  httpUrl()
    .optional()
    .transform((url) => url?.replace(/\/+$/, ""));
export const MB = 1024 * 1024;
/** Without keys in the environment, the AWS SDK looks for credentials where it always does. */
export const SDK_CHAIN = "the SDK's chain";

/** Express's names for address ranges (proxy-addr): loopback, link-local and private addresses. */
const PROXY_PRESETS = ["loopback", "linklocal", "uniquelocal"];

/**
 * LOCUS_TRUST_PROXY: which proxies' X-Forwarded-For and X-Forwarded-Proto to believe. A number of
 * hops (the closest N proxies), or addresses and CIDR ranges (and Express's presets) of the
 * proxies, comma-separated. Unset or "false": none, so a client cannot claim another address.
 */
export const trustProxy = z
  .string()
  .optional()
  .transform((v, ctx): false | number | string[] => {
    const value = v?.trim() ?? "";
    if (value === "" || value === "false") return false;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value.split(",").map((s) => s.trim());
    const bad = entries.filter((entry) => {
      if (PROXY_PRESETS.includes(entry)) return false;
      const [address = "", bits, ...rest] = entry.split("/");
      const family = isIP(address);
      if (family === 0 || rest.length > 0) return true;
      if (bits === undefined) return false;
      return !/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128);
    });
    if (bad.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a number of proxy hops, or addresses and CIDR ranges (or ${PROXY_PRESETS.join(", ")}) separated by commas; not ${bad.map((b) => `"${b}"`).join(", ")}`,
      });
      return z.NEVER;
    }
    return entries;
  });

/**
 * Values that were copied from an example and never changed: docker-compose's and the Kubernetes
 * template's placeholders, and the like. A secret anyone can read in this repository lets anyone
 * who reaches an internal port mint service identities, or forge preview links.
 */
const PLACEHOLDER =
  /change[-_ ]?me|placeholder|example|replace[-_ ]?(?:me|this)|your[-_ ]?secret|at[-_ ]least[-_ ]32/i;

/** A shared secret: long enough, and not a placeholder or a run of a few characters. */
export const secret = z
  .string()
  .min(32, "must be at least 32 characters")
  .refine((v) => !PLACEHOLDER.test(v), {
    message: "is a placeholder from an example file: set a random value (e.g. openssl rand -base64 32)",
  })
  .refine((v) => new Set(v).size >= 10, {
    message:
      "has too few different characters to be random: set a random value (e.g. openssl rand -base64 32)",
  })
  .optional();

export const targets = z.string().transform((v, ctx) => {
  const names = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(TARGETS as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) {
    ctx.addIssue({
      code: "custom",
      message: `unknown target(s) ${unknown.join(", ") || "(none given)"}; choose from ${TARGETS.join(", ")}`,
    });
    return z.NEVER;
  }
  return names as Target[];
});

/** Kinds of address a webhook may be delivered to only when the operator allows them. */
export const WEBHOOK_ADDRESS_KINDS = ["loopback", "private", "link-local"] as const;
export type WebhookAddressKind = (typeof WEBHOOK_ADDRESS_KINDS)[number];

export const webhookAddressKinds = z.string().transform((v, ctx) => {
  const names = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(WEBHOOK_ADDRESS_KINDS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: "custom",
      message: `unknown kind(s) ${unknown.join(", ")}; choose from ${WEBHOOK_ADDRESS_KINDS.join(", ")}`,
    });
    return z.NEVER;
  }
  return [...new Set(names)] as WebhookAddressKind[];
});

/** Seconds, comma-separated, each at least 1: the waits between a webhook's attempts. */
export const retrySchedule = z.string().transform((v, ctx) => {
  const parts = v.split(",").map((s) => s.trim());
  const seconds = parts.map(Number);
  if (
    parts.length === 0 ||
    parts.length > 20 ||
    seconds.some((n) => !Number.isFinite(n) || n < 0.1 || n > 7 * 86_400)
  ) {
    ctx.addIssue({
      code: "custom",
      message: `must be up to 20 waits in seconds, comma-separated (such as 5,300,1800), each from 0.1 to 604800; got "${v}"`,
    });
    return z.NEVER;
  }
  return seconds.map((n) => Math.round(n * 1000));
});

export const ocrLanguages = z.string().transform((v, ctx) => {
  const codes = v
    .split(/[+,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = codes.filter((c) => !/^[a-z]{3}(_[a-z]+)?$/.test(c));
  if (codes.length === 0 || bad.length > 0) {
    ctx.addIssue({
      code: "custom",
      message: `must be Tesseract language codes joined by "+" (such as eng+deu), got "${v}"`,
    });
    return z.NEVER;
  }
  return [...new Set(codes)];
});
