export { dashboardRouter, type DashboardDeps } from "./dashboard-router.ts";
export {
  DEFAULT_PASSWORD_WORK,
  hashPassword,
  passwordProblem,
  PasswordWork,
  verifyPassword,
  type PasswordWorkLimits,
} from "./passwords.ts";
export {
  CSRF_HEADER,
  DashboardSessions,
  SESSION_COOKIE,
  type SessionOptions,
  type SignedIn,
} from "./sessions.ts";
export {
  DEFAULT_SIGNIN_LIMITS,
  DEFAULT_SIGNUP_LIMITS,
  SignInLimiter,
  type SignInLimiterOptions,
  type SignInLimits,
} from "./signin-limiter.ts";
export type {
  DashboardKey,
  DashboardKeyUsage,
  DashboardSession,
  DashboardUsage,
  DashboardUsageDay,
} from "./api-types.ts";
export { NOTICES_CHECKED_EVERY_MS, serverNotices, type CapabilityChecks } from "./server-notices.ts";
