/**
 * The bodies of the dashboard's own endpoints (/dashboard/api/...): what the router sends and what
 * the page (public/js, type-checked against these) reads. The files and search bodies the page reads
 * from the public API are @locus/contracts' types.
 */

/** The signed-in person, as the page shows them. */
export interface DashboardUser {
  email: string;
  plan: string;
}

/** `GET /dashboard/api/session`, and what signing in or up answers: the user and the CSRF token. */
export interface DashboardSession {
  user: DashboardUser;
  csrf: string;
  /** What this server cannot do now, a sentence each (recordings, without a speech engine). */
  notices: string[];
}

/** An API key as listed (`GET /dashboard/api/keys`) and revoked: never the key itself. */
export interface DashboardKey {
  id: string;
  name: string;
  type: "live" | "test";
  /** Its type prefix and a few characters: never enough to use it. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  status: "active" | "revoked";
  revoked_at: string | null;
}

/** `POST /dashboard/api/keys`: the new key, with the whole key this once. */
export interface NewDashboardKey extends DashboardKey {
  key: string;
}

/** `GET /dashboard/api/usage`. */
export interface DashboardUsage {
  plan: string;
  rate_limit_per_second: number;
  /** 0: no monthly limit. */
  monthly_upload_quota: number;
  uploads_this_month: number;
  /** YYYY-MM (UTC). */
  month: string;
  max_upload_bytes: number;
  /**
   * Searches and uploads of live keys and this dashboard per day (UTC), the last 30 days oldest
   * first, today last; a day without any is there with zeros.
   */
  days: DashboardUsageDay[];
  /** The same days' counts per key that made any, the busiest first; `key` null: this dashboard. */
  per_key: DashboardKeyUsage[];
}

/** One day (UTC) of the usage chart. */
export interface DashboardUsageDay {
  /** YYYY-MM-DD. */
  day: string;
  searches: number;
  uploads: number;
}

/** One key's searches and uploads over the usage page's days. */
export interface DashboardKeyUsage {
  /** The key (as listed), or null for searches and uploads made from this dashboard. */
  key: DashboardKey | null;
  searches: number;
  uploads: number;
}
