// @ts-check
// The server: the dashboard's account endpoints (/dashboard/api/...) and the public API (/api/...),
// which takes the session cookie with its CSRF token as well as a key. Every request of the page
// goes through here; the bodies are typed by @locus/contracts and the dashboard's api-types.
import { go } from "./router.js";

/** @typedef {import("@locus/contracts").ErrorMessageDto} ErrorMessageDto */
/** @typedef {import("@locus/contracts").ValidationIssueDto} ValidationIssueDto */
/** @typedef {import("@locus/contracts").FileListDto} FileListDto */
/** @typedef {import("@locus/contracts").FileDeletedDto} FileDeletedDto */
/** @typedef {import("@locus/contracts").FilePassagesDto} FilePassagesDto */
/** @typedef {import("@locus/contracts").PreviewUrlDto} PreviewUrlDto */
/** @typedef {import("@locus/contracts").SearchResponseDto} SearchResponseDto */
/** @typedef {import("../../src/api-types.ts").DashboardSession} DashboardSession */
/** @typedef {import("../../src/api-types.ts").DashboardKey} DashboardKey */
/** @typedef {import("../../src/api-types.ts").NewDashboardKey} NewDashboardKey */
/** @typedef {import("../../src/api-types.ts").DashboardUsage} DashboardUsage */

/**
 * The signed-in session, or null.
 * @type {DashboardSession | null}
 */
let session = null;

export const currentSession = () => session;

/** @param {DashboardSession | null} signedIn */
export function setSession(signedIn) {
  session = signedIn;
}

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} detail
   * @param {number | null} [retryAfterS]
   */
  constructor(status, detail, retryAfterS = null) {
    super(detail);
    this.status = status;
    /** Seconds the server asked us to wait (Retry-After), when it said. */
    this.retryAfterS = retryAfterS;
  }
}

/**
 * A Retry-After header's seconds (a number of seconds or an HTTP date), or null.
 * @param {string | null} value
 */
function retryAfterSeconds(value) {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

/**
 * A readable sentence from an error body: {detail: "..."} or FastAPI's [{msg}] list.
 * @param {unknown} body
 * @param {number} status
 * @returns {string}
 */
export function detailOf(body, status) {
  const detail = /** @type {{ detail?: unknown } | null} */ (body)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return /** @type {ValidationIssueDto[]} */ (detail).map((d) => d.msg).join("; ");
  return `The server answered ${status}.`;
}

/**
 * One request; its JSON answer, or an ApiError with the server's reason. A 401 on a signed-in
 * page ends the session and goes to sign-in.
 * @param {string} path
 * @param {{ method?: string, body?: unknown }} [options]
 * @returns {Promise<unknown>}
 */
export async function request(path, { method = "GET", body } = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (session) headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  /** @type {unknown} */
  const data = text ? JSON.parse(text) : null;
  if (res.status === 401 && session && !path.startsWith("/dashboard/api/sign")) {
    session = null;
    go("#/signin");
    throw new ApiError(401, "Your session has ended: sign in again.");
  }
  if (!res.ok) {
    throw new ApiError(
      res.status,
      detailOf(data, res.status),
      retryAfterSeconds(res.headers.get("Retry-After")),
    );
  }
  return data;
}

// ---------------------------------------------------------------------------------------------
// The account (/dashboard/api)

export const getSession = () => /** @type {Promise<DashboardSession>} */ (request("/dashboard/api/session"));

/**
 * Creates an account ("signup") or signs in ("signin").
 * @param {"signup" | "signin"} how
 * @param {{ email: string, password: string }} credentials
 */
export const enter = (how, credentials) =>
  /** @type {Promise<DashboardSession>} */ (
    request(`/dashboard/api/${how}`, { method: "POST", body: credentials })
  );

export const signOut = () => request("/dashboard/api/signout", { method: "POST" });

export const listKeys = () => /** @type {Promise<DashboardKey[]>} */ (request("/dashboard/api/keys"));

/**
 * @param {string} name
 * @param {string} type "live" or "test"
 */
export const createKey = (name, type) =>
  /** @type {Promise<NewDashboardKey>} */ (
    request("/dashboard/api/keys", { method: "POST", body: { name, type } })
  );

/** @param {string} id */
export const revokeKey = (id) =>
  /** @type {Promise<DashboardKey>} */ (
    request(`/dashboard/api/keys/${encodeURIComponent(id)}`, { method: "DELETE" })
  );

/**
 * @param {string} id
 * @param {string} name
 */
export const renameKey = (id, name) =>
  /** @type {Promise<DashboardKey>} */ (
    request(`/dashboard/api/keys/${encodeURIComponent(id)}`, { method: "PATCH", body: { name } })
  );

export const getUsage = () => /** @type {Promise<DashboardUsage>} */ (request("/dashboard/api/usage"));

// ---------------------------------------------------------------------------------------------
// Files and search (/api)

export const listFiles = () => /** @type {Promise<FileListDto>} */ (request("/api/files?limit=200"));

/** @param {string} id */
export const deleteFile = (id) =>
  /** @type {Promise<FileDeletedDto>} */ (
    request(`/api/files/${encodeURIComponent(id)}`, { method: "DELETE" })
  );

/** @param {string} id */
export const previewUrl = (id) =>
  /** @type {Promise<PreviewUrlDto>} */ (request(`/api/files/${encodeURIComponent(id)}/preview-url`));

/**
 * A page of a file's passages.
 * @param {string} id
 * @param {number} offset
 * @param {number} limit
 */
export const filePassages = (id, offset, limit) =>
  /** @type {Promise<FilePassagesDto>} */ (
    request(`/api/files/${encodeURIComponent(id)}/passages?offset=${offset}&limit=${limit}`)
  );

/** @param {URLSearchParams} params */
export const search = (params) =>
  /** @type {Promise<SearchResponseDto>} */ (request(`/api/search?${params}`));

/**
 * How an upload ended: the status (0: cut off), the body when it was JSON, and any Retry-After.
 * @typedef {{ status: number, body: unknown, retryAfterS: number | null }} UploadAnswer
 */

/**
 * One POST of the file, with progress (XMLHttpRequest reports upload progress; fetch does not).
 * @param {File} file
 * @param {(percent: number) => void} onProgress
 * @returns {Promise<UploadAnswer>}
 */
export function uploadFile(file, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", "/api/files/upload");
    if (!session) throw new TypeError("Not signed in.");
    request.setRequestHeader("X-CSRF-Token", session.csrf);
    request.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      onProgress(Math.round((event.loaded / event.total) * 100));
    });
    request.addEventListener("load", () => {
      /** @type {unknown} */
      let body = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // not JSON: the status says enough
      }
      resolve({
        status: request.status,
        body,
        retryAfterS: retryAfterSeconds(request.getResponseHeader("Retry-After")),
      });
    });
    request.addEventListener("error", () => resolve({ status: 0, body: null, retryAfterS: null }));
    const form = new FormData();
    form.append("file", file, file.name);
    request.send(form);
  });
}
