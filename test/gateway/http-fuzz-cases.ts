/**
 * An HTTP fuzz of every route the gateway declares: malformed paths and query strings, bad
 * bodies, odd methods, missing auth. Shared by test/gateway/http-fuzz.test.ts and `npm run
 * chaos`, which runs the same requests and reports the answers by class.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rawRequest } from "./raw-http.js";

/**
 * Every route the app declares, read from its source so that a new route is fuzzed too: the
 * app's own, and each route group of src/gateway/http/routes/ (all mounted under `/api`).
 */
export function declaredRoutes(): Array<{ method: string; path: string }> {
  const httpFolder = join(import.meta.dirname, "../../src/gateway/http");
  const routesFolder = join(httpFolder, "routes");
  const sources = [
    { prefix: "", text: readFileSync(join(httpFolder, "http-app.ts"), "utf8") },
    ...readdirSync(routesFolder).map((name) => ({
      prefix: "/api",
      text: readFileSync(join(routesFolder, name), "utf8"),
    })),
  ];
  const routes = sources.flatMap(({ prefix, text }) =>
    [...text.matchAll(/(?:app|routes)\.(get|post|put|patch|delete)\(\s*"([^"]+)"/g)].map(
      (match) => ({ method: match[1]!.toUpperCase(), path: `${prefix}${match[2]!}` }),
    ),
  );
  return [...routes, { method: "GET", path: "/" }, { method: "GET", path: "/assets/:file" }];
}

const badSegments = [
  "%",
  "%zz",
  "%E0%A4%A",
  "%c0%ae%c0%ae",
  "%00",
  "..%2f..%2fetc%2fpasswd",
  "%ff%fe",
  "a".repeat(4000),
  "\u00e9",
];

const badBodies: string[] = [
  "",
  "{",
  "null",
  "[]",
  "42",
  '"text"',
  '{"text":5}',
  '{"text":null}',
  '{"text":["a"]}',
  '{"text":""}',
  '{"decision":1}',
  '{"decision":"maybe","message":7}',
  '{"cron":5,"channel":{},"prompt":[]}',
  '{"cron":"* * * * * * *","channel":"a","prompt":"p"}',
  '{"cron":"0 0 31 2 *","channel":"a","prompt":"p"}',
  '{"cron":"not a cron","channel":"a","prompt":"p"}',
  '{"cron":"0 0 1 1 *","channel":"../x","prompt":"p"}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}',
  "[".repeat(20_000),
  `{"text":"${"x".repeat(1024 * 1024 + 10)}"}`,
];

const oddMethods = ["PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "DELETE", "POST", "GET"];

function concrete(path: string, segment = "fuzz"): string {
  return path.replace(/:[A-Za-z]+/g, segment);
}

export interface FuzzReport {
  routes: number;
  requests: number;
  /** Answers by class: `2xx`, `3xx`, `4xx`, `5xx`, and `none` (closed without an answer). */
  byClass: Record<string, number>;
  /** The requests answered 5xx or not at all, as `status METHOD path body`. */
  failures: string[];
}

/** Sends every fuzz request to the gateway at `url` (authorised with `token`, unless a case drops it). */
export async function fuzzEveryRoute(url: string, token: string): Promise<FuzzReport> {
  const { host, port } = new URL(url);
  const routes = declaredRoutes();
  const report: FuzzReport = { routes: routes.length, requests: 0, byClass: {}, failures: [] };
  const check = async (method: string, path: string, body: string | Buffer = "", auth = true) => {
    report.requests += 1;
    const head = [
      `${method} ${path} HTTP/1.1`,
      `Host: ${host}`,
      ...(auth ? [`Authorization: Bearer ${token}`] : []),
      ...(body === "" ? [] : ["Content-Type: application/json"]),
    ].join("\r\n");
    const answer = await rawRequest(Number(port), head, body);
    const kind = answer.status === 0 ? "none" : `${Math.floor(answer.status / 100)}xx`;
    report.byClass[kind] = (report.byClass[kind] ?? 0) + 1;
    if (answer.status >= 500 || answer.status === 0) {
      report.failures.push(
        `${answer.status} ${method} ${path.slice(0, 80)} body ${String(body).slice(0, 40)}`,
      );
    }
  };
  for (const route of routes) {
    for (const segment of badSegments) {
      if (route.path.includes(":")) await check(route.method, concrete(route.path, segment));
      await check(route.method, `${concrete(route.path)}/${segment}`);
      await check(route.method, `${concrete(route.path)}?limit=${segment}&token=${segment}`);
    }
    for (const method of oddMethods) await check(method, concrete(route.path));
    await check(route.method, concrete(route.path), "", false);
    if (route.method === "GET") continue;
    for (const body of badBodies) await check(route.method, concrete(route.path), body);
    await check(route.method, concrete(route.path), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
  }
  return report;
}
