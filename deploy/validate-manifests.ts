/**
 * Offline checks of what deploy/validate.sh rendered: Kubernetes objects against the API schemas
 * (kubernetes-models), the KEDA objects by their documented shape, and both the manifests and the
 * compose file against Locus itself: every process's environment must pass Locus's own
 * configuration rules (packages/runtime/src/config.ts), and the names that tie objects together
 * (Services, Secrets, queues, URLs) must point at something that exists.
 *
 *   node --import tsx deploy/validate-manifests.ts \
 *     --k8s base=rendered-base.yaml --k8s production=rendered-production.yaml \
 *     --compose compose-config.yaml --compose elasticsearch=compose-with-profile-config.yaml \
 *     --second-apply production=release-1.yaml,release-2.yaml
 *
 * --second-apply takes two renderings of one overlay, two releases apart: the second must apply over
 * the first (no immutable field changes). Exits 1 listing every problem, 0 with a summary of what was checked. The checks themselves are
 * in deploy/manifest-checks/, a file per concern (kubernetes-*.ts for one rendering, compose.ts).
 */
import { parseArgs } from "node:util";
import { checkCompose } from "./manifest-checks/compose.ts";
import { checkKubernetes } from "./manifest-checks/kubernetes.ts";
import { checkSecretTemplate } from "./manifest-checks/kubernetes-schemas.ts";
import { checkSecondApply } from "./manifest-checks/kubernetes-upgrade.ts";
import { imageEnvironment } from "./manifest-checks/locus.ts";

const { values } = parseArgs({
  options: {
    k8s: { type: "string", multiple: true, default: [] },
    compose: { type: "string", multiple: true, default: [] },
    "second-apply": { type: "string", multiple: true, default: [] },
  },
});
const imageEnv = imageEnvironment();
const problems: string[] = [];
if (!imageEnv.PORT) problems.push("deploy/Dockerfile: the final stage sets no PORT");
problems.push(...checkSecretTemplate());
for (const spec of values.k8s) {
  const eq = spec.indexOf("=");
  if (eq <= 0) throw new Error(`--k8s takes label=file, got "${spec}"`);
  problems.push(...checkKubernetes(spec.slice(0, eq), spec.slice(eq + 1), imageEnv));
}
for (const spec of values.compose) {
  // "file", or "profile[,profile]=file" for a rendering with those profiles turned on.
  const eq = spec.indexOf("=");
  const profiles = eq > 0 ? spec.slice(0, eq).split(",") : [];
  problems.push(...checkCompose(eq > 0 ? spec.slice(eq + 1) : spec, imageEnv, profiles));
}
for (const spec of values["second-apply"]) {
  const m = spec.match(/^([^=]+)=([^,]+),(.+)$/);
  if (!m) throw new Error(`--second-apply takes label=first.yaml,second.yaml, got "${spec}"`);
  problems.push(...checkSecondApply(m[1]!, m[2]!, m[3]!));
}
if (values.k8s.length === 0 && values.compose.length === 0 && values["second-apply"].length === 0)
  throw new Error("nothing to check: give --k8s, --compose and/or --second-apply");

if (problems.length > 0) {
  process.stderr.write(`\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
