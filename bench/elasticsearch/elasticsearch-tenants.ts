// The Elasticsearch benchmark's tenants (Zipf-sized) and the order of their files.
import { rng } from "../corpus/corpus.ts";
import { PASSAGES_PER_FILE, TENANT_ZIPF_EXPONENT, type TenantLabel } from "./elasticsearch-types.ts";

// ---------------------------------------------------------------------------------------------
// Tenants and files

/** Passages per tenant, largest first: Zipf shares of `total`, at least 1 each, summing to `total`. */
export function tenantSizes(total: number, tenants: number, exponent = TENANT_ZIPF_EXPONENT): number[] {
  if (tenants < 1 || total < tenants)
    throw new Error(`need at least one passage per tenant (${total} < ${tenants})`);
  const weights = Array.from({ length: tenants }, (_, k) => 1 / (k + 1) ** exponent);
  const sum = weights.reduce((s, w) => s + w, 0);
  const raw = weights.map((w) => (total * w) / sum);
  const sizes = raw.map((r) => Math.max(1, Math.floor(r)));
  let diff = total - sizes.reduce((s, n) => s + n, 0);
  // Largest remainders first for what is missing; the largest tenants give back any excess.
  const byRemainder = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0]);
  for (let j = 0; diff > 0; j = (j + 1) % tenants, diff--) sizes[byRemainder[j]![1]]! += 1;
  for (let i = 0; diff < 0; i = (i + 1) % tenants) {
    if (sizes[i]! > 1) {
      sizes[i]! -= 1;
      diff++;
    }
  }
  // Rounding can put a small tenant above a larger one: rank by size again.
  return sizes.sort((a, b) => b - a);
}

/** Small (the smallest), medium (nearest the geometric mean of the extremes) and the largest tenant. */
export function measuredTenants(sizes: readonly number[]): { label: TenantLabel; rank: number }[] {
  const last = sizes.length - 1;
  const target = Math.sqrt(sizes[0]! * sizes[last]!);
  let medium = 0;
  for (let i = 0; i <= last; i++)
    if (Math.abs(Math.log(sizes[i]! / target)) < Math.abs(Math.log(sizes[medium]! / target))) medium = i;
  const picked = [
    { label: "small" as const, rank: last + 1 },
    { label: "medium" as const, rank: medium + 1 },
    { label: "largest" as const, rank: 1 },
  ];
  // Few or equal tenants: one tenant is measured once, under the last (largest) label that names it.
  return picked.filter((p, i) => !picked.slice(i + 1).some((q) => q.rank === p.rank));
}

/**
 * The order files are written in: every tenant's files, in order within the tenant, interleaved
 * across tenants at random (seeded), as many tenants' uploads would arrive.
 */
export function fileSchedule(sizes: readonly number[], seed: number): { tenant: number; file: number }[] {
  const slots: number[] = [];
  sizes.forEach((n, t) => {
    for (let f = 0; f < Math.ceil(n / PASSAGES_PER_FILE); f++) slots.push(t);
  });
  const random = rng(seed);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const next = sizes.map(() => 0);
  return slots.map((tenant) => ({ tenant, file: next[tenant]!++ }));
}

export interface Tenant {
  /** Position among the tenants, largest first (rank - 1): where its passages start (elasticsearch-corpus.ts). */
  index: number;
  rank: number;
  userId: string;
  passages: number;
  /** Only for measured tenants: a result naming any other file is a tenancy leak. */
  fileIds: Set<string> | null;
}
