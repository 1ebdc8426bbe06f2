// Kubernetes networking: Services, the gateway's URLs to files and search, NetworkPolicies.
import type { Rendering, Workload } from "./kubernetes-rendering.ts";
import { matches } from "./kubernetes-rendering.ts";
import { CALLED_TARGETS, EGRESS_LIMITED_TARGETS, FORBIDDEN_EGRESS_PORTS } from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, isObj, list, obj, show, text } from "./yaml.ts";

/** Services select one Deployment each; the gateway reaches files and search through them. */
export function checkServices(
  rendering: Rendering,
  workloads: Workload[],
  byTarget: Map<string, Workload>,
): void {
  const { label, problems, where, ofKind } = rendering;
  // 3. Services select exactly one Deployment and reach a port it declares.
  const serviceTarget = new Map<string, { target: string | undefined; ports: Obj[] }>();
  for (const s of ofKind("Service")) {
    const selected = workloads.filter((w) => matches(at(s, "spec", "selector"), w.podLabels));
    if (selected.length !== 1) {
      problems.push(`${where(s)}: its selector matches ${selected.length} Deployments, expected 1`);
      continue;
    }
    const w = selected[0] as Workload;
    const containerPorts = list(at(w.podSpec, "containers"))
      .flatMap((c) => list(at(c, "ports")))
      .map(obj);
    const ports = list(at(s, "spec", "ports")).map(obj);
    for (const p of ports) {
      const tp = p.targetPort ?? p.port;
      if (!containerPorts.some((cp) => cp.name === tp || cp.containerPort === tp)) {
        problems.push(`${where(s)}: targetPort ${show(tp)} is not a port of Deployment ${w.name}`);
      }
    }
    serviceTarget.set(show(at(s, "metadata", "name")), { target: w.target, ports });
  }

  // 4. The gateway reaches files and search through those Services.
  const gateway = byTarget.get("gateway");
  const gatewayEnv = gateway?.env;
  for (const [target, variable] of Object.entries(CALLED_TARGETS)) {
    const url = gatewayEnv?.[variable];
    if (!gateway || !url) continue; // already reported by Locus's own check
    const u = new URL(url);
    const [host, namespace] = u.hostname.split(".");
    const renderedNamespace = text(at(gateway.doc, "metadata", "namespace"));
    const service = serviceTarget.get(host ?? "");
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    if (!service) {
      problems.push(`[${label}] gateway ${variable}=${url}: no Service named ${show(host)}`);
    } else if (service.target !== target) {
      problems.push(
        `[${label}] gateway ${variable}=${url}: Service ${show(host)} runs ${show(service.target)}`,
      );
    } else if (!service.ports.some((p) => show(p.port) === port)) {
      problems.push(`[${label}] gateway ${variable}=${url}: Service ${show(host)} has no port ${port}`);
    } else if (namespace && namespace !== "svc" && renderedNamespace && namespace !== renderedNamespace) {
      problems.push(
        `[${label}] gateway ${variable}=${url}: namespace ${namespace}, but Locus runs in ${renderedNamespace}`,
      );
    }
  }
  for (const t of Object.keys(CALLED_TARGETS)) {
    if (![...serviceTarget.values()].some((s) => s.target === t))
      problems.push(`[${label}] no Service for ${t}`);
  }
}

/** NetworkPolicies: who may connect to each Deployment. */
export function checkNetworkPolicies(rendering: Rendering, workloads: Workload[]): void {
  const { label, problems, ofKind } = rendering;
  // 7. The network: only gateways may reach files and search, nothing may reach the indexer and
  //    the extractors (NetworkPolicy ingress; a pod no policy selects is open to the cluster).
  const policies = ofKind("NetworkPolicy").map((p) => ({
    name: show(at(p, "metadata", "name")),
    selector: obj(at(p, "spec", "podSelector")),
    ingress: (at(p, "spec", "ingress") as Obj[] | undefined) ?? [],
    limitsEgress: list(at(p, "spec", "policyTypes")).includes("Egress"),
    egress: list(at(p, "spec", "egress")).map(obj),
  }));
  const selects = (selector: Obj, labels: Obj) =>
    Object.entries(obj(selector.matchLabels)).every(([k, v]) => labels[k] === v) &&
    ((selector.matchExpressions as Obj[] | undefined) ?? []).every((e) => {
      const value = labels[show(e.key)];
      const values = (e.values as unknown[] | undefined) ?? [];
      if (e.operator === "In") return values.includes(value);
      if (e.operator === "NotIn") return !values.includes(value);
      if (e.operator === "Exists") return value !== undefined;
      return value === undefined;
    });
  const gatewayLabels = workloads.find((w) => w.target === "gateway")?.podLabels ?? {};
  for (const w of workloads.filter((x) => x.doc.kind === "Deployment")) {
    const applying = policies.filter((p) => selects(p.selector, w.podLabels));
    const ww = `[${label}] Deployment/${w.name}`;
    if (applying.length === 0) {
      problems.push(`${ww}: no NetworkPolicy selects its pods, so anything in the cluster reaches them`);
      continue;
    }
    const sources = applying.flatMap((p) => p.ingress.map((rule) => ({ policy: p.name, rule })));
    if (w.target === "gateway") continue;
    for (const { policy, rule } of sources) {
      const from = (rule.from as Obj[] | undefined) ?? [];
      const onlyGateways =
        from.length > 0 &&
        from.every(
          (f) => f.ipBlock === undefined && f.namespaceSelector === undefined && isObj(f.podSelector),
        ) &&
        from.every((f) => selects(obj(f.podSelector), gatewayLabels));
      if (!w.target || !(w.target in CALLED_TARGETS)) {
        problems.push(`${ww}: NetworkPolicy ${policy} lets connections in; it serves nobody`);
      } else if (!onlyGateways) {
        problems.push(`${ww}: NetworkPolicy ${policy} lets in more than Locus's gateways`);
      }
    }
    if (w.target && EGRESS_LIMITED_TARGETS.includes(w.target)) checkEgress(ww, w, applying);
  }

  /**
   * 7b. A pod that opens untrusted documents reaches only what Locus runs on: an egress policy
   * selects it, none of the rules that apply lets it out on any port or on plain HTTP, and the
   * ports of its own connections (Postgres, RabbitMQ, S3) stay allowed. Policies add up, so every
   * egress rule of every policy selecting the pod counts.
   */
  function checkEgress(ww: string, w: Workload, applying: typeof policies): void {
    const limiting = applying.filter((p) => p.limitsEgress);
    if (limiting.length === 0) {
      problems.push(`${ww}: no NetworkPolicy limits its egress; it opens untrusted documents`);
      return;
    }
    const rules = limiting.flatMap((p) => p.egress.map((rule) => ({ policy: p.name, rule })));
    const allowed = new Set<string>();
    for (const { policy, rule } of rules) {
      const ports = list(rule.ports).map(obj);
      if (ports.length === 0) {
        problems.push(
          `${ww}: NetworkPolicy ${policy} has an egress rule without ports: it lets out every port`,
        );
      }
      for (const p of ports) {
        const port = show(p.port);
        if (p.port === undefined || p.endPort !== undefined || !/^\d+$/.test(port)) {
          problems.push(
            `${ww}: NetworkPolicy ${policy} allows egress to ${show(p.port)}: name single ports by number`,
          );
        } else if (FORBIDDEN_EGRESS_PORTS.includes(Number(port))) {
          problems.push(`${ww}: NetworkPolicy ${policy} lets it out on port ${port} (plain HTTP)`);
        }
        allowed.add(`${show(p.protocol ?? "TCP")}/${port}`);
      }
    }
    // What the pod connects to, from the environment it starts with (the Secret's template when
    // the Secret is not rendered): S3 without an endpoint is AWS's, over HTTPS.
    const needs: [string, string, string][] = [];
    for (const [variable, fallback] of [
      ["DATABASE_URL", "5432"],
      ["AMQP_URL", "5672"],
      ["S3_ENDPOINT", "443"],
    ] as const) {
      const value = w.env[variable]?.trim();
      if (!value) {
        if (variable === "S3_ENDPOINT" && w.env.LOCUS_BLOB_STORE === "s3")
          needs.push([variable, "443", "AWS S3"]);
        continue;
      }
      let port: string;
      try {
        const u = new URL(value);
        port =
          u.port ||
          (u.protocol === "https:"
            ? "443"
            : u.protocol === "amqps:"
              ? "5671"
              : u.protocol === "http:"
                ? "80"
                : fallback);
      } catch {
        continue; // Locus's own check reports a URL it cannot read
      }
      needs.push([variable, port, value.replace(/\/\/[^@/]*@/, "//")]);
    }
    for (const [variable, port, what] of needs) {
      if (!allowed.has(`TCP/${port}`)) {
        problems.push(
          `${ww}: its egress policies do not allow TCP port ${port}, which ${variable} (${what}) needs`,
        );
      }
    }
    for (const dns of ["UDP/53", "TCP/53"]) {
      if (!allowed.has(dns)) problems.push(`${ww}: its egress policies do not allow DNS (${dns})`);
    }
  }
}
