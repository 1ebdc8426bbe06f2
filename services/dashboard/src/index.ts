export { dashboardRouter, type DashboardDeps } from "./dashboard-router.ts";
export { hashPassword, passwordProblem, verifyPassword } from "./passwords.ts";
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
  type SignInLimits,
} from "./signin-limiter.ts";
