/**
 * The API's routes that need no token: the health (for people and load balancers) and the
 * trade of a page link's code for the token. Mounted before the token check.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { type HealthRouteOptions, healthRoute } from "../health-route.js";
import type { LinkCodes } from "../link-codes.js";
import { readJson } from "./api-request.js";

export interface OpenRoutesOptions extends HealthRouteOptions {
  token: string;
  /** The page's link codes, traded for the token by `POST /api/link-codes/redeem`. */
  linkCodes: LinkCodes;
}

const redeemBody = v.object({ code: v.pipe(v.string(), v.maxLength(200, "code is too long")) });

export function openRoutes(options: OpenRoutesOptions): Hono {
  const routes = new Hono();
  routes.get("/health", healthRoute(options));
  routes.post("/link-codes/redeem", async (context) => {
    const { code } = await readJson(context.req.raw, redeemBody);
    if (!(await options.linkCodes.redeem(code))) {
      return context.json(
        {
          error:
            "this link's code is unknown, expired or already used (a link works once, within 10 minutes); run `rudder link` for a fresh one",
        },
        401,
      );
    }
    return context.json({ token: options.token });
  });
  return routes;
}
