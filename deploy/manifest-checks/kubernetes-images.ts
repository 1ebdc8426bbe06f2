// The image every Locus workload runs: one build for all, and outside a local cluster, by digest.
import type { Rendering } from "./kubernetes-rendering.ts";
import { LOCAL_RENDERINGS } from "./locus.ts";
import { at, list, obj, show } from "./yaml.ts";

/** An image pinned by digest: what a registry can never move, unlike a tag pushed again. */
export const PINNED_IMAGE = /^[^@\s]+@sha256:[0-9a-f]{64}$/;

/** The containers of the rendering's Deployments, Jobs and CronJobs, with where each is. */
export function workloadImages(rendering: Rendering): { where: string; image: string }[] {
  const { where, ofKind } = rendering;
  return [...ofKind("Deployment"), ...ofKind("Job"), ...ofKind("CronJob")].flatMap((o) => {
    const template =
      o.kind === "CronJob" ? at(o, "spec", "jobTemplate", "spec", "template") : at(o, "spec", "template");
    return [...list(at(template, "spec", "initContainers")), ...list(at(template, "spec", "containers"))]
      .map(obj)
      .map((c) => ({ where: `${where(o)} container ${show(c.name)}`, image: show(c.image) }));
  });
}

/**
 * Every container runs the same image (deploy/Dockerfile builds one for every target), and outside
 * LOCAL_RENDERINGS it is pinned by digest: with a tag alone, a tag pushed again would leave the
 * pods of one Deployment running two builds, and a rollback would not bring the old build back.
 */
export function checkImages(rendering: Rendering): void {
  const { label, problems } = rendering;
  const images = workloadImages(rendering);
  const distinct = new Set(images.map((i) => i.image));
  if (distinct.size > 1)
    problems.push(`[${label}] workloads run ${distinct.size} images: ${[...distinct].join(", ")}`);
  if (LOCAL_RENDERINGS.includes(label)) return;
  for (const { where, image } of images) {
    if (!PINNED_IMAGE.test(image)) {
      problems.push(
        `${where}: image "${image}" has no digest; the release step pins it ` +
          `(kustomize edit set image locus=<registry>/locus:<version>@sha256:<digest>)`,
      );
    }
  }
}
